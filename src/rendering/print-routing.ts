/**
 * Which page prints a document without scripts when a render slot has a print browser of its own
 * (`PRESSROOM_PRINT_BROWSERS=per-slot`, `slot-print-browser.ts`): a short document in the slot's
 * single-process browser, a long one on the slot's reused print page in the multi-process browser.
 *
 * Why: a single-process browser saves a fixed cost per print (the print compositor process Chromium
 * starts for each `Page.printToPDF`, ~12–17 ms), which is a large share of a one-page document's
 * print, and it loses to contention what it saves from about three pages on: two single-process
 * browsers side by side spent 9–12 % more CPU on the 33-page report than one multi-process browser
 * (docs/rendering.md "Print browsers"; `bench/print-process-cost.ts --throughput-only yes` and
 * `bench/service-cpu.ts --fixture report`). And a long print is what could outlast a single-process
 * browser's ~3 minutes. So only documents of about two pages or fewer are printed per slot.
 *
 * A document's length is judged before printing, from its HTML: the characters of its markup, with
 * the payloads of `data:` URIs left out — an embedded logo or photo is decoded once, not laid out
 * line by line, so an invoice with a 200 KB logo is still a one-page document. The peers' invoice has
 * 12.7 K characters; the peers' report with its first 30 ledger rows (one page) 18 K, with 100 rows
 * (three pages) 44 K, whole (33 pages) 562 K.
 */

/** A document with more markup characters than this prints on the multi-process browser (see the file comment). */
export const SLOT_PRINT_MAX_MARKUP_CHARS = 32 * 1024;

/** Characters that end a `data:` URI in HTML or CSS: a quote, a closing parenthesis, white space, `>`. */
const DATA_URI_END = /["')\s>]/g;

/** The characters of `html` outside the payloads of its `data:` URIs (what its layout is judged by). */
export function markupChars(html: string): number {
  let chars = html.length;
  for (let at = html.indexOf('data:'); at >= 0; at = html.indexOf('data:', at)) {
    DATA_URI_END.lastIndex = at;
    const end = DATA_URI_END.exec(html)?.index ?? html.length;
    chars -= end - at;
    at = end;
  }
  return chars;
}

/** True when a document without scripts should print in the slot's own single-process browser. */
export function printsInSlotBrowser(html: string): boolean {
  // Most documents are far below the bound: no scan for them.
  return html.length <= SLOT_PRINT_MAX_MARKUP_CHARS || markupChars(html) <= SLOT_PRINT_MAX_MARKUP_CHARS;
}
