/** Page setup: paper (a named size or a custom width × height), orientation, the four margins — checked with the server's own rules — and tagged PDF. */
import { MARGIN_SIDES, PAGE_FORMATS, type MarginSide, type Orientation, type PageFormat } from '../../lib/api-types.js';
import { isPageLength, PAGE_LENGTH_UNITS_TEXT } from '../../lib/format.js';
import type { Problem } from '../../lib/problems.js';
import { paperProblem, type Draft } from './use-template-draft.js';

const SIDE_LABELS: Record<MarginSide, string> = { top: 'Top', right: 'Right', bottom: 'Bottom', left: 'Left' };

export function PageSetupForm({
  draft,
  update,
  problems,
}: {
  draft: Draft;
  update(patch: Partial<Draft>): void;
  problems: Problem[];
}) {
  const setMargin = (side: MarginSide, value: string) => update({ margin: { ...draft.margin, [side]: value } });
  const paper = paperProblem(draft);
  return (
    <div class="page-setup">
      <div class="form-row">
        <label class="field">
          <span class="field-label">Paper format</span>
          <select
            value={draft.format}
            onChange={(e) => update({ format: e.currentTarget.value as PageFormat | 'custom' })}
          >
            {PAGE_FORMATS.map((f) => (
              <option key={f} value={f}>
                {f}
              </option>
            ))}
            <option value="custom">Custom size…</option>
          </select>
        </label>
        <fieldset class="field radio-group">
          <legend class="field-label">Orientation</legend>
          {(['portrait', 'landscape'] as Orientation[]).map((o) => (
            <label key={o} class="radio">
              <input
                type="radio"
                name="orientation"
                value={o}
                checked={draft.orientation === o}
                onChange={() => update({ orientation: o })}
              />
              {o === 'portrait' ? 'Portrait' : 'Landscape'}
            </label>
          ))}
        </fieldset>
      </div>
      {draft.format === 'custom' && (
        <fieldset class="margins">
          <legend class="field-label">Custom paper size</legend>
          <p class="help" id="paper-help">
            Width and height as CSS lengths with {PAGE_LENGTH_UNITS_TEXT} (e.g. <code>100mm</code> × <code>150mm</code>
            ); landscape swaps them.
          </p>
          <div class="margin-grid">
            {(['width', 'height'] as const).map((side) => {
              const invalid = paper?.field === side;
              return (
                <label key={side} class="field">
                  <span class="field-label">{side === 'width' ? 'Width' : 'Height'}</span>
                  <input
                    value={draft[side]}
                    onInput={(e) => update({ [side]: e.currentTarget.value })}
                    aria-invalid={invalid || undefined}
                    aria-describedby={invalid ? 'paper-error' : 'paper-help'}
                    placeholder={side === 'width' ? 'e.g. 100mm' : 'e.g. 150mm'}
                    inputMode="decimal"
                    spellcheck={false}
                  />
                </label>
              );
            })}
          </div>
          {paper && (
            <span class="field-error" id="paper-error">
              {paper.message}
            </span>
          )}
        </fieldset>
      )}
      <fieldset class="margins">
        <legend class="field-label">Margins</legend>
        <p class="help" id="margin-help">
          CSS lengths: <code>0</code> or a number with {PAGE_LENGTH_UNITS_TEXT} (e.g. <code>20mm</code>). Empty uses the
          default.
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
      <label class="field checkbox">
        <input
          type="checkbox"
          checked={draft.tagged}
          onChange={(e) => update({ tagged: e.currentTarget.checked })}
          aria-describedby="tagged-help"
        />
        <span class="field-label">Tagged PDF (accessible)</span>
      </label>
      <p class="help" id="tagged-help">
        A structure tree and bookmarks, which screen readers and PDF/UA need. Off: faster and much smaller for long
        documents, but not accessible.
      </p>
      <label class="field checkbox">
        <input
          type="checkbox"
          checked={draft.pdf_ua}
          disabled={!draft.tagged}
          onChange={(e) => update({ pdf_ua: e.currentTarget.checked })}
          aria-describedby="pdfua-help"
          data-testid="page-pdf-ua"
        />
        <span class="field-label">Accessible PDF (PDF/UA) by default</span>
      </label>
      <p class="help" id="pdfua-help">
        Every document of this template is PDF/UA-1 and checked before it is charged; it needs a language (&lt;html
        lang&gt;), a &lt;title&gt; and a text (alt) on every image. Needs a tagged PDF.
      </p>
      {problems.map((p, i) => (
        <p key={i} class="notice notice-error" role="alert">
          {p.message}
        </p>
      ))}
    </div>
  );
}
