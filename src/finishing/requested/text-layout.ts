/**
 * Watermark text in a script that needs shaping or runs right to left (Arabic, Hebrew, Indic, Thai,
 * conjoining Hangul jamo…), laid out by Chromium: its HarfBuzz shapes every script the machine's fonts
 * cover, where @libpdf/core draws one glyph per character, left to right. The text is a template's
 * data (`../assets/text-mark.html`), rendered through the renderer like any document — the account's
 * fair share of the render slots, the sandbox, the closed room — into a one-page PDF cut to the text's
 * own box, which the watermark then places, turns and draws like a PDF asset (watermark.ts).
 */
import { readFileSync } from 'node:fs';
import type { RenderRequest, RenderResult } from '../../rendering/pdf-renderer.js';

/** What a laid-out mark looks like; the colour as `#rrggbb` (checked by the request's schema). */
export interface TextMarkRequest {
  accountId: string;
  text: string;
  fontSize: number;
  color: string;
}

/** Text → a one-page PDF of the text's own size. */
export type TextLayout = (request: TextMarkRequest) => Promise<Uint8Array>;

const TEXT_MARK_HTML = readFileSync(new URL('../assets/text-mark.html', import.meta.url), 'utf8');
/**
 * An account marks every document alike: the marks made last are kept (a few KiB each), as for text drawn
 * by libpdf, per account: shared, a quick answer would tell one account which text another marks with.
 */
const MARKS_KEPT = 64;

/** A TextLayout over `render` (the renderer's), remembering the last marks it made. */
export function createTextLayout(render: (request: RenderRequest) => Promise<RenderResult>): TextLayout {
  const made = new Map<string, Promise<Uint8Array>>();
  return (request) => {
    const key = JSON.stringify([request.accountId, request.text, request.fontSize, request.color]);
    const kept = made.get(key);
    if (kept) return kept;
    const mark = render({
      template: { html: TEXT_MARK_HTML, strict: true },
      data: { text: request.text, font_size: request.fontSize, color: request.color },
      accountId: request.accountId,
      tagged: false,
    }).then((result) => new Uint8Array(result.pdf));
    if (made.size >= MARKS_KEPT) made.delete(made.keys().next().value!);
    made.set(key, mark);
    // A failed layout (a busy renderer) is tried afresh next time.
    mark.catch(() => made.delete(key));
    return mark;
  };
}
