/** The signature report of the Verify tool: intact or changed, and per signature the signer, time and time-stamp. */
import { formatTime } from '../../lib/format.js';
import type { SignatureReport } from '../finishing/finishing.js';

export function VerifyReport({ report, file }: { report: SignatureReport; file: string }) {
  if (!report.signed)
    return (
      <p class="notice notice-warning" data-testid="verify-verdict">
        {file} has no signature.
      </p>
    );
  return (
    <div class={`notice ${report.intact ? 'notice-success' : 'notice-error'}`} data-testid="verify-report">
      <p data-testid="verify-verdict">
        <strong>{report.intact ? 'Intact' : 'Modified'}:</strong>{' '}
        {report.intact
          ? `${file} is exactly as signed.`
          : `${file} was changed after it was signed${report.signatures.some((s) => !s.valid) ? ': signed bytes differ' : ': content was added after the last signature'}.`}
      </p>
      <ul>
        {report.signatures.map((s) => (
          <li key={s.field} data-testid="verify-signature">
            Signed by <strong>{s.signer ?? s.signer_dn ?? 'an unknown signer'}</strong>
            {s.signing_time ? ` on ${formatTime(s.signing_time)}` : ''} ·{' '}
            {s.timestamp.present
              ? `time-stamped${s.timestamp.time ? ` ${formatTime(s.timestamp.time)}` : ''}`
              : 'no time-stamp (time claimed by the signer)'}{' '}
            · {s.valid ? 'signature valid' : `signature broken (${s.validation})`}
            {s.valid && !s.covers_whole_document ? ' · content added after it' : ''}
          </li>
        ))}
      </ul>
      <p class="help">
        Who signed, when, and whether the bytes are still the ones signed; whether you trust the certificate is yours to
        judge.
      </p>
    </div>
  );
}
