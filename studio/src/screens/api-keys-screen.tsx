/**
 * API keys: list (prefix, created, revoked), create (the key is shown once, with a copy button), revoke.
 * Revoking the key this tab is signed in with signs the tab out. The account's last working key cannot
 * be revoked (the service refuses it, 409 LAST_API_KEY): its dialog says so and offers a new key instead.
 */
import { useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { api, signOut, useSession } from '../api/session.js';
import type { ApiKeyInfo } from '../lib/api-types.js';
import { formatTime } from '../lib/format.js';
import { chooseAction, confirmAction } from '../components/confirm-dialog.js';
import { CopyButton } from '../components/copy-button.js';
import { ErrorNotice, StatusNotice } from '../components/notice.js';
import { useLoad } from '../components/use-load.js';

const PREFIX_LENGTH = 12;

export function ApiKeysScreen() {
  const { apiKey } = useSession();
  const keys = useLoad(
    async () => (await api().json<{ api_keys: ApiKeyInfo[] }>('GET', '/v1/account/api-keys')).api_keys,
    [],
  );
  const [created, setCreated] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const currentPrefix = apiKey?.slice(0, PREFIX_LENGTH);

  const create = async () => {
    setBusy(true);
    setError(null);
    setStatus(null);
    try {
      const r = await api().json<{ api_key: string }>('POST', '/v1/account/api-keys');
      setCreated(r.api_key);
      await keys.reload();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };

  /** The last working key: revoked, it would lock the account out. Offer a new key instead. */
  const offerNewKey = async (key: ApiKeyInfo) => {
    const choice = await chooseAction({
      title: 'This is your last API key',
      message: `Key ${key.prefix}… is the only key of this account that works. Revoked, nothing could sign in to the studio or make documents, and no new key could be made. Create a new key first; then you can revoke this one.`,
      cancelLabel: 'Keep this key',
      choices: [{ id: 'create', label: 'Create a new key', tone: 'primary' }],
    });
    if (choice === 'create') await create();
  };

  const revoke = async (key: ApiKeyInfo) => {
    const isCurrent = key.prefix === currentPrefix;
    if ((keys.data ?? []).filter((k) => !k.revoked_at).length <= 1) return offerNewKey(key);
    const ok = await confirmAction({
      title: 'Revoke API key?',
      message: `Key ${key.prefix}… stops working at once.${isCurrent ? ' It is the key this tab is signed in with: you will be signed out.' : ''}`,
      confirmLabel: 'Revoke key',
      danger: true,
    });
    if (!ok) return;
    setError(null);
    try {
      await api().json('DELETE', `/v1/account/api-keys/${encodeURIComponent(key.prefix)}`);
      if (isCurrent) return signOut('You revoked the key this tab was signed in with.');
      setStatus(`Key ${key.prefix}… revoked.`);
      await keys.reload();
    } catch (e) {
      // Another tab revoked the other keys meanwhile: this one is the last after all.
      if (e instanceof ApiError && e.code === 'LAST_API_KEY') {
        await keys.reload();
        return offerNewKey(key);
      }
      setError((e as Error).message);
    }
  };

  return (
    <main class="screen" id="main">
      <div class="screen-head">
        <h1 tabIndex={-1}>API keys</h1>
        <button type="button" class="button button-primary" onClick={create} disabled={busy}>
          {busy ? 'Creating…' : 'Create key'}
        </button>
      </div>
      {created && (
        <div class="card new-key" role="status">
          <h2>New API key</h2>
          <p>Copy it now: it is shown only once. Pressroom keeps only its prefix and a hash.</p>
          <div class="new-key-row">
            <code class="secret" data-testid="new-api-key">
              {created}
            </code>
            <CopyButton text={created} label="Copy key" />
          </div>
          <button type="button" class="button button-small" onClick={() => setCreated(null)}>
            I have saved it
          </button>
        </div>
      )}
      <ErrorNotice>{error ?? keys.error?.message}</ErrorNotice>
      {status && <StatusNotice tone="success">{status}</StatusNotice>}
      {keys.data && (
        <table class="table responsive-table">
          <caption class="visually-hidden">API keys of this account</caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Created</th>
              <th scope="col">Status</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.data.map((key) => (
              <tr key={key.prefix}>
                <td data-label="Key">
                  <code>{key.prefix}…</code>{' '}
                  {key.prefix === currentPrefix && <span class="badge badge-neutral">this tab</span>}
                </td>
                <td data-label="Created">{formatTime(key.created_at)}</td>
                <td data-label="Status">
                  {key.revoked_at ? (
                    <span class="badge badge-failed">revoked {formatTime(key.revoked_at)}</span>
                  ) : (
                    <span class="badge badge-completed">active</span>
                  )}
                </td>
                <td class="row-actions">
                  {!key.revoked_at && (
                    <button
                      type="button"
                      class="button button-small button-danger-quiet"
                      onClick={() => revoke(key)}
                      aria-label={`Revoke key ${key.prefix}`}
                    >
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}
