/**
 * S3 storage settings: GET /v1/integrations/s3 (404 S3_NOT_CONFIGURED when unset), save with POST, test
 * the stored configuration (its {success, message} or the 400 {detail}), delete with confirmation.
 * Each field is checked before sending with the service's own rules, said in a person's words (a raw
 * validator message such as "String should match pattern …" never reaches the screen).
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api/client.js';
import { api } from '../api/session.js';
import type { S3Config, ValidationIssue } from '../lib/api-types.js';
import { confirmAction } from '../components/confirm-dialog.js';
import { ErrorNotice, StatusNotice } from '../components/notice.js';
import { useLoad } from '../components/use-load.js';

type FormField = 'endpoint_url' | 'access_key_id' | 'secret_access_key' | 'bucket_name' | 'default_prefix';
type Form = Record<FormField, string>;

const EMPTY: Form = { endpoint_url: '', access_key_id: '', secret_access_key: '', bucket_name: '', default_prefix: '' };

const FIELDS: { id: FormField; label: string; help: string; type?: string; placeholder?: string }[] = [
  {
    id: 'endpoint_url',
    label: 'Endpoint URL',
    help: 'https:// address of the S3-compatible service.',
    type: 'url',
    placeholder: 'https://s3.eu-central-1.amazonaws.com',
  },
  { id: 'access_key_id', label: 'Access key id', help: '16 to 128 characters.' },
  {
    id: 'secret_access_key',
    label: 'Secret access key',
    help: '16 to 128 characters. Stored encrypted; never shown again.',
    type: 'password',
  },
  { id: 'bucket_name', label: 'Bucket', help: 'Lowercase letters, digits, dots and hyphens.' },
  { id: 'default_prefix', label: 'Default path prefix', help: 'Optional, e.g. invoices/2025/.' },
];

const length = (v: string, min: number, max: number, what: string) =>
  v.length < min || v.length > max ? `This has ${v.length} characters; ${what} has ${min} to ${max}.` : null;

/** What is wrong with a field's value, as the service's rules (SPEC.md) would refuse it; null when fine. */
function fieldProblem(id: FormField, raw: string, configured: boolean): string | null {
  const v = raw.trim();
  switch (id) {
    case 'endpoint_url':
      if (!v) return 'Enter the address of your S3 service, starting with https://.';
      if (!/^https:\/\//i.test(v)) return 'The address must start with https:// (the connection is encrypted).';
      return length(v, 10, 200, 'an address');
    case 'access_key_id':
      return v ? length(v, 16, 128, 'an access key id') : 'Enter the access key id your S3 provider gave you.';
    case 'secret_access_key':
      if (!raw)
        return configured
          ? null
          : 'Enter the secret access key: new settings need it (later, leave it empty to keep the stored one).';
      return length(raw, 16, 128, 'a secret access key');
    case 'bucket_name':
      if (!v) return "Enter your bucket's name.";
      if (v.includes('_')) return 'A bucket name has no underscores: use hyphens instead.';
      if (/[A-Z]/.test(v)) return 'A bucket name is in lowercase letters only.';
      if (!/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/.test(v))
        return 'Use lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit.';
      return length(v, 3, 63, 'a bucket name');
    case 'default_prefix':
      if (!/^[A-Za-z0-9_./-]*$/.test(v)) return 'Use letters, digits and _ . / - only (no spaces).';
      return v.length > 500 ? `This has ${v.length} characters; a prefix has at most 500.` : null;
  }
}

async function loadConfig(): Promise<S3Config | null> {
  try {
    const config = await api().json<S3Config>('GET', '/v1/integrations/s3');
    return config.configured === false ? null : config;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

export function S3Screen() {
  const config = useLoad(loadConfig, []);
  const [form, setForm] = useState<Form>(EMPTY);
  const [fieldErrors, setFieldErrors] = useState<Partial<Record<FormField, string>>>({});
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [test, setTest] = useState<{ ok: boolean; message: string } | null>(null);
  const [busy, setBusy] = useState<'save' | 'test' | 'delete' | null>(null);
  const configured = !!config.data;

  useEffect(() => {
    const c = config.data;
    setForm(
      c
        ? {
            endpoint_url: c.endpoint_url ?? '',
            access_key_id: c.access_key_id ?? '',
            secret_access_key: '',
            bucket_name: c.bucket_name ?? '',
            default_prefix: c.default_prefix ?? '',
          }
        : EMPTY,
    );
  }, [config.data]);

  const act = async (kind: 'save' | 'test' | 'delete', action: () => Promise<void>) => {
    setBusy(kind);
    setError(null);
    setStatus(null);
    try {
      await action();
    } catch (e) {
      if (e instanceof ApiError && e.status === 422 && Array.isArray((e.body as { detail?: unknown }).detail)) {
        const errors: Partial<Record<FormField, string>> = {};
        for (const issue of (e.body as { detail: ValidationIssue[] }).detail) {
          const field = String(issue.loc[issue.loc.length - 1]) as FormField;
          // Our own words for a field we know; the service's message only for one we do not.
          errors[field] =
            (FIELDS.some((f) => f.id === field) ? fieldProblem(field, form[field], configured) : null) ?? issue.msg;
        }
        setFieldErrors(errors);
        setError('Not saved: some settings are not valid; see the marked fields.');
      } else setError((e as Error).message);
    } finally {
      setBusy(null);
    }
  };

  const save = (event: Event) => {
    event.preventDefault();
    const problems = Object.fromEntries(
      FIELDS.map((f) => [f.id, fieldProblem(f.id, form[f.id], configured)]).filter(([, problem]) => problem),
    ) as Partial<Record<FormField, string>>;
    setFieldErrors(problems);
    if (Object.keys(problems).length > 0) {
      setStatus(null);
      setError('Not saved: some settings are not valid; see the marked fields.');
      return;
    }
    void act('save', async () => {
      setFieldErrors({});
      const body: Record<string, string> = {
        endpoint_url: form.endpoint_url.trim(),
        access_key_id: form.access_key_id.trim(),
        bucket_name: form.bucket_name.trim(),
        default_prefix: form.default_prefix.trim(),
      };
      if (form.secret_access_key) body.secret_access_key = form.secret_access_key;
      await api().json('POST', '/v1/integrations/s3', { body });
      setStatus('S3 settings saved. Test them to check the bucket can be written.');
      setTest(null);
      await config.reload();
    });
  };

  const runTest = () =>
    act('test', async () => {
      setTest(null);
      try {
        const r = await api().json<{ success: boolean; message: string }>('POST', '/v1/integrations/s3/test');
        setTest({ ok: r.success, message: r.message });
      } catch (e) {
        if (e instanceof ApiError && e.status === 400) setTest({ ok: false, message: e.message });
        else throw e;
      }
    });

  const remove = () =>
    act('delete', async () => {
      const ok = await confirmAction({
        title: 'Delete S3 settings?',
        message: 'Generations will use the built-in storage again. This cannot be undone.',
        confirmLabel: 'Delete settings',
        danger: true,
      });
      if (!ok) return;
      await api().json('DELETE', '/v1/integrations/s3');
      setTest(null);
      setStatus('S3 settings deleted.');
      await config.reload();
    });

  return (
    <main class="screen" id="main">
      <div class="screen-head">
        <h1 tabIndex={-1}>S3 storage</h1>
        <span class={`badge ${configured ? 'badge-completed' : 'badge-neutral'}`}>
          {config.loading && !config.data ? '…' : configured ? 'Configured' : 'Not configured'}
        </span>
      </div>
      <p class="help">
        Send generated PDFs to your own S3-compatible bucket with <code>store_s3: true</code>. Without it, PDFs are kept
        by Pressroom and shared as signed links.
      </p>
      <ErrorNotice>{config.error?.message}</ErrorNotice>
      <form class="card s3-form" onSubmit={save} noValidate>
        {FIELDS.map((f) => {
          const masked = f.id === 'secret_access_key' && configured ? config.data?.secret_access_key_masked : undefined;
          const helpId = `s3-${f.id}-help`;
          return (
            <label class="field" key={f.id}>
              <span class="field-label">{f.label}</span>
              <input
                type={f.type ?? 'text'}
                value={form[f.id]}
                onInput={(e) => setForm({ ...form, [f.id]: e.currentTarget.value })}
                placeholder={masked ? `${masked} (leave empty to keep)` : f.placeholder}
                autoComplete="off"
                spellcheck={false}
                aria-invalid={fieldErrors[f.id] ? true : undefined}
                aria-describedby={helpId}
                onBlur={() =>
                  fieldErrors[f.id] &&
                  setFieldErrors((current) => ({
                    ...current,
                    [f.id]: fieldProblem(f.id, form[f.id], configured) ?? undefined,
                  }))
                }
                required={f.id !== 'default_prefix' && !(f.id === 'secret_access_key' && configured)}
              />
              <span class="help" id={helpId}>
                {fieldErrors[f.id] ? <span class="field-error">{fieldErrors[f.id]}</span> : f.help}
              </span>
            </label>
          );
        })}
        <ErrorNotice>{error}</ErrorNotice>
        {status && <StatusNotice tone="success">{status}</StatusNotice>}
        <div class="button-row">
          <button type="submit" class="button button-primary" disabled={busy !== null}>
            {busy === 'save' ? 'Saving…' : 'Save settings'}
          </button>
          <button type="button" class="button" onClick={runTest} disabled={busy !== null || !configured}>
            {busy === 'test' ? 'Testing…' : 'Test connection'}
          </button>
          <button
            type="button"
            class="button button-danger-quiet"
            onClick={remove}
            disabled={busy !== null || !configured}
          >
            Delete settings
          </button>
        </div>
        <div aria-live="polite" data-testid="s3-test-result">
          {test && (
            <p class={`notice ${test.ok ? 'notice-success' : 'notice-error'}`}>
              {test.ok ? `Connection works: ${test.message}` : `Test failed: ${test.message}`}
            </p>
          )}
        </div>
      </form>
    </main>
  );
}
