/** Puts the evaluated template together into the document Chromium prints. */

const HEAD_END = /<\/head\s*>/i;
const DOCTYPE = /^\s*<!doctype[^>]*>/i;
const SCRIPT_TAG = /<script[\s>/]/i;

/**
 * Adds the template's `css` as a `<style>` at the end of `<head>` (so it overrides the head's own
 * styles), or at the very start when there is no head — after a doctype, which must stay first or
 * the page falls into quirks mode.
 */
export function injectCss(html: string, css: string | null | undefined): string {
  if (!css || css.trim() === '') return html;
  // `</style` inside the CSS would end the element early and turn the rest into markup.
  const style = `<style>${css.replace(/<\/style/gi, '<\\/style')}</style>`;
  const head = HEAD_END.exec(html);
  if (head) return html.slice(0, head.index) + style + html.slice(head.index);
  const doctype = DOCTYPE.exec(html);
  if (doctype) return html.slice(0, doctype[0].length) + style + html.slice(doctype[0].length);
  return style + html;
}

/**
 * A document opts into JavaScript by containing a `<script>` element (charts, barcodes). Everything
 * else prints with scripts disabled; inline handlers and `javascript:` URLs never run there.
 */
export function needsScripts(html: string): boolean {
  return SCRIPT_TAG.test(html);
}
