/** Puts the evaluated template together into the document Chromium prints. */

const HEAD_START = /<head(\s[^>]*)?>/i;
const HEAD_END = /<\/head\s*>/i;
const DOCTYPE = /^\s*<!doctype[^>]*>/i;
const SCRIPT_TAG = /<script[\s>/]/i;

/**
 * Print-friendly defaults under every document (issue 13): a table row is not split across pages
 * (a row's cells stay together; the `<thead>` repeats on each page, which Chromium does by itself).
 * In a cascade layer of their own, so any rule of the template wins whatever its specificity or
 * place — `tr { break-inside: auto }` gives splitting back.
 */
export const PRINT_DEFAULTS_CSS = '@layer pressroom-defaults { tr { break-inside: avoid; } }';

/**
 * Readable header and footer text (issue 13): without a `font-size`, Chromium prints header and
 * footer templates at about 1 pt. Set on the root, so anything the template says (inline style,
 * a rule on any element of its own) wins, by inheritance or by order.
 */
export const HEADER_FOOTER_DEFAULTS_CSS =
  'html { font-size: 10px; font-family: "Helvetica Neue", Helvetica, Arial, "Liberation Sans", "DejaVu Sans", sans-serif; }';

const styleElement = (css: string) => `<style>${css.replace(/<\/style/gi, '<\\/style')}</style>`;

/**
 * Puts the print defaults first in `<head>` and the template's `css` as a `<style>` at the end of
 * `<head>` (so it overrides the head's own styles); without a head, both at the very start — after
 * a doctype, which must stay first or the page falls into quirks mode.
 */
export function injectCss(html: string, css: string | null | undefined): string {
  const defaults = styleElement(PRINT_DEFAULTS_CSS);
  // `</style` inside the CSS would end the element early and turn the rest into markup.
  const style = !css || css.trim() === '' ? '' : styleElement(css);
  const head = HEAD_END.exec(html);
  if (head) {
    const withCss = html.slice(0, head.index) + style + html.slice(head.index);
    const open = HEAD_START.exec(withCss);
    if (open && open.index < head.index)
      return withCss.slice(0, open.index + open[0].length) + defaults + withCss.slice(open.index + open[0].length);
    return defaults + withCss;
  }
  const doctype = DOCTYPE.exec(html);
  if (doctype) return html.slice(0, doctype[0].length) + defaults + style + html.slice(doctype[0].length);
  return defaults + style + html;
}

/** A header or footer template with the readable defaults in front of it. */
export function withHeaderFooterDefaults(template: string): string {
  return styleElement(HEADER_FOOTER_DEFAULTS_CSS) + template;
}

/**
 * A document opts into JavaScript by containing a `<script>` element (charts, barcodes). Everything
 * else prints with scripts disabled; inline handlers and `javascript:` URLs never run there.
 */
export function needsScripts(html: string): boolean {
  return SCRIPT_TAG.test(html);
}

const BODY_END = /<\/body\s*>/i;

/** Adds `markup` at the end of the body (before `</body>`, or at the very end when there is none). */
export function appendToBody(html: string, markup: string): string {
  if (markup === '') return html;
  const end = BODY_END.exec(html);
  return end ? html.slice(0, end.index) + markup + html.slice(end.index) : html + markup;
}
