/** Page setup: format, orientation and the four margins (CSS lengths, checked as the server does). */
import { MARGIN_SIDES, PAGE_FORMATS, type MarginSide, type Orientation, type PageFormat } from '../../lib/api-types.js';
import { isPageLength, PAGE_LENGTH_UNITS_TEXT } from '../../lib/format.js';
import type { Problem } from '../../lib/problems.js';
import type { Draft } from './use-template-draft.js';

const SIDE_LABELS: Record<MarginSide, string> = { top: 'Top', right: 'Right', bottom: 'Bottom', left: 'Left' };

export function PageSetupForm({ draft, update, problems }: { draft: Draft; update(patch: Partial<Draft>): void; problems: Problem[] }) {
  const setMargin = (side: MarginSide, value: string) => update({ margin: { ...draft.margin, [side]: value } });
  return (
    <div class="page-setup">
      <div class="form-row">
        <label class="field">
          <span class="field-label">Paper format</span>
          <select value={draft.format} onChange={(e) => update({ format: e.currentTarget.value as PageFormat })}>
            {PAGE_FORMATS.map((f) => (
              <option key={f} value={f}>
                {f}
              </option>
            ))}
          </select>
        </label>
        <fieldset class="field radio-group">
          <legend class="field-label">Orientation</legend>
          {(['portrait', 'landscape'] as Orientation[]).map((o) => (
            <label key={o} class="radio">
              <input type="radio" name="orientation" value={o} checked={draft.orientation === o} onChange={() => update({ orientation: o })} />
              {o === 'portrait' ? 'Portrait' : 'Landscape'}
            </label>
          ))}
        </fieldset>
      </div>
      <fieldset class="margins">
        <legend class="field-label">Margins</legend>
        <p class="help" id="margin-help">
          CSS lengths: <code>0</code> or a number with {PAGE_LENGTH_UNITS_TEXT} (e.g. <code>20mm</code>). Empty uses the default.
        </p>
        <div class="margin-grid">
          {MARGIN_SIDES.map((side) => {
            const value = draft.margin[side];
            const invalid = value.trim() !== '' && !isPageLength(value.trim());
            return (
              <label key={side} class="field">
                <span class="field-label">{SIDE_LABELS[side]}</span>
                <input
                  value={value}
                  onInput={(e) => setMargin(side, e.currentTarget.value)}
                  aria-invalid={invalid || undefined}
                  aria-describedby={invalid ? `margin-${side}-error` : 'margin-help'}
                  placeholder="e.g. 20mm"
                  inputMode="decimal"
                  spellcheck={false}
                />
                {invalid && (
                  <span class="field-error" id={`margin-${side}-error`}>
                    Not a CSS length
                  </span>
                )}
              </label>
            );
          })}
        </div>
      </fieldset>
      {problems.map((p, i) => (
        <p key={i} class="notice notice-error" role="alert">
          {p.message}
        </p>
      ))}
    </div>
  );
}
