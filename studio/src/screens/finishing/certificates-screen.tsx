/**
 * Certificates (issue 39): the account's signing certificates. Upload a PKCS#12 (.p12/.pfx) dropped or
 * picked, with a name and its password (POST /v1/certificates; the key is kept sealed and never shown
 * again), list them with subject, issuer and validity (an expired or soon-expiring one is marked), and
 * delete one (confirmed). A refused upload says what is wrong with the file or the password.
 */
import { useRef, useState } from 'preact/hooks';
import { ApiError, describeRefusal } from '../../api/client.js';
import { api } from '../../api/session.js';
import { formatTime } from '../../lib/format.js';
import { confirmAction } from '../../components/confirm-dialog.js';
import { DropZone } from '../../components/drop-zone.js';
import { ErrorNotice, StatusNotice } from '../../components/notice.js';
import { useLoad } from '../../components/use-load.js';
import { validityOf, type CertificateInfo } from './finishing.js';
import { readAsBase64 } from './read-file.js';

const NAME = /^[A-Za-z0-9_.-]{1,64}$/;
const isPkcs12 = (file: File) => /\.(p12|pfx)$/i.test(file.name) || file.type === 'application/x-pkcs12';

/** The account's certificates, for the screens that name one (PDF tools, Run). */
export function useCertificates() {
  return useLoad(
    async () => (await api().json<{ certificates: CertificateInfo[] }>('GET', '/v1/certificates')).certificates,
    [],
  );
}

const BADGE: Record<ReturnType<typeof validityOf>['state'], string> = {
  valid: 'badge-completed',
  'near-expiry': 'badge-pending',
  expired: 'badge-failed',
  'not-yet-valid': 'badge-pending',
};

export function CertificatesScreen() {
  const list = useCertificates();
  const [file, setFile] = useState<File | null>(null);
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const picker = useRef<HTMLInputElement>(null);
  const nameInvalid = name !== '' && !NAME.test(name);

  const choose = (files: File[] | FileList | null) => {
    const picked = [...(files ?? [])][0];
    if (picker.current) picker.current.value = '';
    setStatus(null);
    if (!picked) return;
    if (!isPkcs12(picked)) {
      setError(`${picked.name} is not a .p12 or .pfx file: export the certificate with its private key as PKCS#12.`);
      return;
    }
    setError(null);
    setFile(picked);
    if (!name)
      setName(
        picked.name
          .replace(/\.(p12|pfx)$/i, '')
          .replace(/[^A-Za-z0-9_.-]+/g, '-')
          .slice(0, 64),
      );
  };

  /** Names a refused place as the form does. */
  const place = (loc: readonly (string | number)[]): string | null =>
    (
      ({ pkcs12_base64: file ? `The file (${file.name})` : 'The file', password: 'Password', name: 'Name' }) as Record<
        string,
        string
      >
    )[String(loc[0])] ?? null;

  const upload = async (event: Event) => {
    event.preventDefault();
    if (!file || !NAME.test(name)) return;
    setBusy(true);
    setError(null);
    setStatus(null);
    try {
      const created = await api().json<CertificateInfo>('POST', '/v1/certificates', {
        body: { name, pkcs12_base64: await readAsBase64(file), password },
      });
      setStatus(
        `Certificate “${created.name}” uploaded (${created.subject}). Its key is kept sealed and is never shown again.`,
      );
      setFile(null);
      setName('');
      setPassword('');
      await list.reload();
    } catch (e) {
      setError(
        e instanceof ApiError && e.code === 'CERTIFICATE_EXISTS'
          ? `You already have a certificate named “${name}”: delete it first or choose another name.`
          : describeRefusal(e, place),
      );
    } finally {
      setBusy(false);
    }
  };

  const remove = async (cert: CertificateInfo) => {
    const ok = await confirmAction({
      title: 'Delete certificate?',
      message: `“${cert.name}” and its key will be gone for good; documents that name it can no longer be signed. Documents already signed stay valid.`,
      confirmLabel: 'Delete certificate',
      danger: true,
    });
    if (!ok) return;
    setError(null);
    try {
      await api().json('DELETE', `/v1/certificates/${encodeURIComponent(cert.name)}`);
      setStatus(`Certificate “${cert.name}” deleted.`);
      await list.reload();
    } catch (e) {
      setError(describeRefusal(e));
    }
  };

  return (
    <main class="screen" id="main">
      <div class="screen-head">
        <h1 tabIndex={-1}>Certificates</h1>
      </div>
      <p class="help">
        Certificates sign your documents (Run, and Sign on the PDF tools screen). Upload one as a PKCS#12 file (.p12 or
        .pfx, the certificate with its private key) and its password; both are stored encrypted and never shown again.
        Free.
      </p>
      <form class="card tool-form" onSubmit={upload}>
        <DropZone class="file-drop" testId="certificate-drop" onFiles={choose}>
          <p>{file ? `${file.name} — drop another to replace it, or` : 'Drop a .p12 or .pfx file here, or'}</p>
          <label for="certificate-file" class="visually-hidden">
            PKCS#12 file
          </label>
          <input
            id="certificate-file"
            ref={picker}
            class="visually-hidden"
            type="file"
            accept=".p12,.pfx,application/x-pkcs12"
            onChange={(e) => choose(e.currentTarget.files)}
          />
          <button type="button" class="button" onClick={() => picker.current?.click()}>
            {file ? 'Choose another file…' : 'Choose a file…'}
          </button>
        </DropZone>
        <div class="field">
          <label class="field-label" for="certificate-name">
            Name
          </label>
          <input
            id="certificate-name"
            value={name}
            onInput={(e) => setName(e.currentTarget.value)}
            maxLength={64}
            required
            aria-invalid={nameInvalid || undefined}
            aria-describedby="certificate-name-help"
            spellcheck={false}
            placeholder="company-seal"
          />
          <span id="certificate-name-help" class={nameInvalid ? 'field-error' : 'help'}>
            {nameInvalid ? 'Letters, digits, “.”, “_” and “-” only.' : 'Signatures name the certificate by this.'}
          </span>
        </div>
        <label class="field">
          <span class="field-label">Password</span>
          <input
            type="password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
            autoComplete="off"
          />
        </label>
        <button type="submit" class="button button-primary" disabled={busy || !file || !NAME.test(name)}>
          {busy ? 'Uploading…' : 'Upload certificate'}
        </button>
      </form>
      {error && (
        <p class="notice notice-error" role="alert" data-testid="certificate-error">
          Not uploaded: {error}
        </p>
      )}
      {status && <StatusNotice tone="success">{status}</StatusNotice>}
      <ErrorNotice>{list.error?.message}</ErrorNotice>
      {list.data && list.data.length === 0 && <p class="empty">No certificates yet.</p>}
      {list.data && list.data.length > 0 && (
        <table class="table responsive-table" data-testid="certificates">
          <caption class="visually-hidden">Signing certificates of this account</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Subject</th>
              <th scope="col">Issuer</th>
              <th scope="col">Valid</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.map((cert) => {
              const validity = validityOf(cert);
              return (
                <tr key={cert.name} data-certificate={cert.name}>
                  <th scope="row" data-label="Name">
                    <code>{cert.name}</code>
                  </th>
                  <td data-label="Subject">{cert.subject}</td>
                  <td data-label="Issuer">{cert.issuer}</td>
                  <td data-label="Valid">
                    <span
                      class={`badge cert-validity ${BADGE[validity.state]}`}
                      data-testid="certificate-validity"
                      data-state={validity.state}
                    >
                      {validity.label}
                    </span>{' '}
                    <span>
                      {formatTime(cert.not_before)} – {formatTime(cert.not_after)}
                    </span>
                  </td>
                  <td class="row-actions">
                    <button
                      type="button"
                      class="button button-small button-danger-quiet"
                      onClick={() => remove(cert)}
                      aria-label={`Delete certificate ${cert.name}`}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </main>
  );
}
