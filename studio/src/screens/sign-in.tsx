/** Sign-in with an API key. The key is checked with GET /v1/account and kept in sessionStorage only. */
import { useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { signIn, useSession } from '../api/session.js';
import { ErrorNotice, StatusNotice } from '../components/notice.js';

export function SignInScreen() {
  const { notice } = useSession();
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    const trimmed = key.trim();
    if (!trimmed) return setError('Enter an API key.');
    setBusy(true);
    setError(null);
    try {
      await signIn(trimmed);
    } catch (e) {
      const status = e instanceof ApiError ? e.status : 0;
      setError(status === 401 ? 'That API key is not valid or has been revoked.' : (e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="sign-in" id="main">
      <form class="card sign-in-card" onSubmit={submit} aria-labelledby="sign-in-title" noValidate>
        <div class="brand brand-large">
          <img src="/favicon.svg" alt="" width="32" height="32" />
          <span>Pressroom Studio</span>
        </div>
        <h1 id="sign-in-title">Sign in</h1>
        <p class="muted">Write, preview and run your PDF templates.</p>
        {notice && <StatusNotice tone="warning">{notice}</StatusNotice>}
        <label class="field">
          <span class="field-label">API key</span>
          <input
            type="password"
            name="api_key"
            autoComplete="off"
            spellcheck={false}
            placeholder="pr_…"
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
            aria-invalid={error ? true : undefined}
            aria-describedby="api-key-help"
            required
          />
        </label>
        <p class="help" id="api-key-help">
          Kept in this browser tab only (sessionStorage) and sent as <code>x-api-key</code>. An administrator creates
          keys with <code>pressroom accounts create</code>.
        </p>
        <ErrorNotice>{error}</ErrorNotice>
        <button type="submit" class="button button-primary button-block" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
