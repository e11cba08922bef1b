/**
 * Run's finishing (issue 39): a watermark (text, opacity), a signature (one of the account's
 * certificates, reason, location, time-stamp) and protection (owner and user passwords), each off
 * until ticked, sent as the create request's `watermark`, `sign` and `protect`.
 */
import { CertificateSelect } from '../pdf-tools/tool-options.js';
import type { CertificateInfo, FinishingDraft } from './finishing.js';

interface Props {
  draft: FinishingDraft;
  onChange(draft: FinishingDraft): void;
  certificates: CertificateInfo[] | undefined;
  problem: string | null;
}

export function FinishingSection({ draft, onChange, certificates, problem }: Props) {
  const set = <K extends keyof FinishingDraft>(part: K, patch: Partial<FinishingDraft[K]>) => onChange({ ...draft, [part]: { ...draft[part], ...patch } });
  const text = (part: keyof FinishingDraft, key: string, label: string, type = 'text') => (
    <label class="field">
      <span class="field-label">{label}</span>
      <input type={type} value={String((draft[part] as unknown as Record<string, string>)[key])} onInput={(e) => set(part, { [key]: e.currentTarget.value } as never)} spellcheck={false} autoComplete="off" />
    </label>
  );
  return (
    <fieldset class="radio-group finishing" data-testid="run-finishing">
      <legend class="field-label">Finishing</legend>
      <label class="field checkbox">
        <input type="checkbox" checked={draft.watermark.on} onChange={(e) => set('watermark', { on: e.currentTarget.checked })} />
        <span class="field-label">Add a watermark</span>
      </label>
      {draft.watermark.on && (
        <>
          {text('watermark', 'text', 'Watermark text')}
          {text('watermark', 'opacity', 'Watermark opacity (0.05–1)')}
        </>
      )}
      <label class="field checkbox">
        <input type="checkbox" checked={draft.sign.on} onChange={(e) => set('sign', { on: e.currentTarget.checked })} />
        <span class="field-label">Sign the PDF</span>
      </label>
      {draft.sign.on && (
        <>
          <CertificateSelect id="run-sign-certificate" value={draft.sign.certificate} onChange={(certificate) => set('sign', { certificate })} certificates={certificates} />
          {text('sign', 'reason', 'Signature reason (optional)')}
          {text('sign', 'location', 'Signature location (optional)')}
          <label class="field checkbox">
            <input type="checkbox" checked={draft.sign.timestamp} onChange={(e) => set('sign', { timestamp: e.currentTarget.checked })} />
            <span class="field-label">Time-stamp the signature</span>
          </label>
        </>
      )}
      <label class="field checkbox">
        <input type="checkbox" checked={draft.protect.on} onChange={(e) => set('protect', { on: e.currentTarget.checked })} />
        <span class="field-label">Protect with passwords</span>
      </label>
      {draft.protect.on && (
        <>
          {text('protect', 'ownerPassword', 'Owner password', 'password')}
          {text('protect', 'userPassword', 'User password (optional; needed to open)', 'password')}
          <p class="help">Not with PDF/A, an e-invoice or a signature: PDF/A forbids encryption, and encrypting rewrites the bytes a signature covers.</p>
        </>
      )}
      {problem && <p class="field-error" data-testid="finishing-problem">{problem}</p>}
    </fieldset>
  );
}
