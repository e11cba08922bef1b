/**
 * Run's finishing (issue 39): a watermark (text, or an image or PDF asset of the library; opacity), a
 * signature (one of the account's certificates, reason, location, a time-stamp from the service's
 * authority or the account's own, a visible box) and protection (owner and user passwords, the
 * permissions), each off until ticked, sent as the create request's `watermark`, `sign` and `protect`.
 */
import { api } from '../../api/session.js';
import { useLoad } from '../../components/use-load.js';
import type { AssetInfo } from '../../lib/api-types.js';
import { CertificateSelect } from '../pdf-tools/tool-options.js';
import { NO_SERVICE_TSA, type CertificateInfo, type FinishingDraft } from './finishing.js';

interface Props {
  draft: FinishingDraft;
  /** The service has a time-stamp authority of its own (GET /v1/capabilities; true while unknown). */
  serviceTsa: boolean;
  onChange(draft: FinishingDraft): void;
  certificates: CertificateInfo[] | undefined;
  problem: string | null;
}

/** The asset types a watermark draws. */
const MARK_TYPES = new Set(['image/png', 'image/jpeg', 'application/pdf']);

/** The library's PNG, JPEG and PDF assets, the ones a watermark can be. */
function useMarkAssets() {
  return useLoad(
    async () =>
      (await api().json<{ assets: AssetInfo[] }>('GET', '/v1/assets')).assets.filter((asset) =>
        MARK_TYPES.has(asset.content_type),
      ),
    [],
  );
}

export function FinishingSection({ draft, onChange, serviceTsa, certificates, problem }: Props) {
  const assets = useMarkAssets();
  const set = <K extends keyof FinishingDraft>(part: K, patch: Partial<FinishingDraft[K]>) =>
    onChange({ ...draft, [part]: { ...draft[part], ...patch } });
  const text = (part: keyof FinishingDraft, key: string, label: string, type = 'text') => (
    <label class="field">
      <span class="field-label">{label}</span>
      <input
        type={type}
        value={String((draft[part] as unknown as Record<string, string>)[key])}
        onInput={(e) => set(part, { [key]: e.currentTarget.value } as never)}
        spellcheck={false}
        autoComplete="off"
      />
    </label>
  );
  const tick = (part: keyof FinishingDraft, key: string, label: string) => (
    <label class="field checkbox">
      <input
        type="checkbox"
        checked={Boolean((draft[part] as unknown as Record<string, boolean>)[key])}
        onChange={(e) => set(part, { [key]: e.currentTarget.checked } as never)}
      />
      <span class="field-label">{label}</span>
    </label>
  );
  return (
    <fieldset class="radio-group finishing" data-testid="run-finishing">
      <legend class="field-label">Finishing</legend>
      {tick('watermark', 'on', 'Add a watermark')}
      {draft.watermark.on && (
        <>
          <label class="field">
            <span class="field-label">Watermark from</span>
            <select
              value={draft.watermark.source}
              onChange={(e) => set('watermark', { source: e.currentTarget.value as 'text' | 'asset' })}
            >
              <option value="text">Text</option>
              <option value="asset">An image or PDF asset</option>
            </select>
          </label>
          {draft.watermark.source === 'text' ? (
            text('watermark', 'text', 'Watermark text')
          ) : (
            <label class="field">
              <span class="field-label">Watermark asset</span>
              <select
                value={draft.watermark.asset}
                onChange={(e) => set('watermark', { asset: e.currentTarget.value })}
              >
                <option value="">
                  {assets.data
                    ? assets.data.length === 0
                      ? 'No PNG, JPEG or PDF assets yet'
                      : 'Choose an asset…'
                    : 'Loading…'}
                </option>
                {assets.data?.map((asset) => (
                  <option key={asset.name} value={asset.name}>
                    {asset.name}
                  </option>
                ))}
              </select>
            </label>
          )}
          {text('watermark', 'opacity', 'Watermark opacity (0.05–1)')}
        </>
      )}
      {tick('sign', 'on', 'Sign the PDF')}
      {draft.sign.on && (
        <>
          <CertificateSelect
            id="run-sign-certificate"
            value={draft.sign.certificate}
            onChange={(certificate) => set('sign', { certificate })}
            certificates={certificates}
          />
          {text('sign', 'reason', 'Signature reason (optional)')}
          {text('sign', 'location', 'Signature location (optional)')}
          {tick('sign', 'timestamp', 'Time-stamp the signature')}
          {draft.sign.timestamp &&
            text(
              'sign',
              'tsaUrl',
              serviceTsa ? "Time-stamp authority URL (optional; empty: the service's)" : 'Time-stamp authority URL',
              'url',
            )}
          {draft.sign.timestamp && !serviceTsa && (
            <p class="help" data-testid="tsa-needed">
              Needed: {NO_SERVICE_TSA}
            </p>
          )}
          {tick('sign', 'visible', 'Show the signature on a page')}
          {draft.sign.visible && (
            <div class="field-row">
              {text('sign', 'page', 'Page')}
              {text('sign', 'x', 'x (pt from the left)')}
              {text('sign', 'y', 'y (pt from the bottom)')}
              {text('sign', 'width', 'Width (pt)')}
              {text('sign', 'height', 'Height (pt)')}
            </div>
          )}
        </>
      )}
      {tick('protect', 'on', 'Protect with passwords')}
      {draft.protect.on && (
        <>
          {text('protect', 'ownerPassword', 'Owner password', 'password')}
          {text('protect', 'userPassword', 'User password (optional; needed to open)', 'password')}
          <label class="field">
            <span class="field-label">Printing</span>
            <select
              value={draft.protect.printing}
              onChange={(e) => set('protect', { printing: e.currentTarget.value as 'high' | 'low' | 'none' })}
            >
              <option value="high">Allowed</option>
              <option value="low">Low resolution only</option>
              <option value="none">Not allowed</option>
            </select>
          </label>
          {tick('protect', 'copying', 'Allow copying text and images')}
          {tick('protect', 'modifying', 'Allow changes')}
          {tick('protect', 'annotating', 'Allow comments')}
          {tick('protect', 'fillingForms', 'Allow filling in forms')}
          <p class="help">
            Not with PDF/A, an e-invoice or a signature: PDF/A forbids encryption, and encrypting rewrites the bytes a
            signature covers. Text stays readable to accessibility tools.
          </p>
        </>
      )}
      {problem && (
        <p class="field-error" data-testid="finishing-problem">
          {problem}
        </p>
      )}
    </fieldset>
  );
}
