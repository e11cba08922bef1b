/**
 * The `pages` of extract-pages (TemplateFox's syntax): 1-based page numbers and ranges separated by
 * commas, e.g. `1-3, 5`. The order given is the order of the result (`3, 1-2` → 3, 1, 2); a range may
 * run backwards (`5-3` → 5, 4, 3) and a page may be named twice. Parsed in two steps: the syntax before
 * any download, the page numbers against the document once its page count is known.
 */

/** A parsed selection: single pages and ranges, in the order given. */
export type PageSelection = { from: number; to: number }[];

import { ValidationError } from '../shared/errors.js';

/** A 422 at `["body","pages"]` that says what is wrong with the selection. */
function refuse(msg: string, type = 'pages_invalid'): never {
  throw new ValidationError([{ loc: ['body', 'pages'], msg, type }]);
}

/** A page number written in a selection or a map key: digits only, at most 9 of them. */
export const PAGE_NUMBER = /^\d{1,9}$/;

/** Reads `1-3, 5` into ranges; a 422 names the part that is wrong. */
export function parsePageSelection(text: string): PageSelection {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.every((p) => p === '')) refuse('pages is empty; give page numbers and ranges such as "1-3, 5"');
  return parts.map((part) => {
    if (part === '') refuse('pages has an empty item between commas; give page numbers and ranges such as "1-3, 5"');
    const [first, second, ...rest] = part.split('-').map((p) => p.trim());
    const bad = rest.length > 0 || !PAGE_NUMBER.test(first!) || (second !== undefined && !PAGE_NUMBER.test(second));
    if (bad) refuse(`"${part}" is not a page number or a range such as "2-4"`);
    const from = Number(first);
    const to = second === undefined ? from : Number(second);
    if (from === 0 || to === 0) refuse(`"${part}": pages are numbered from 1`);
    return { from, to };
  });
}

/**
 * The pages of a selection in the order given, checked against a document of `pageCount` pages and
 * against the most pages a result may have (422 otherwise).
 */
export function selectedPages(selection: PageSelection, pageCount: number, maxPages: number): number[] {
  const pages: number[] = [];
  for (const { from, to } of selection) {
    const outside = Math.max(from, to) > pageCount;
    if (outside) {
      const named = from === to ? `page ${from} is` : `the range ${from}-${to} is`;
      refuse(
        `${named} outside the document, which has ${pageCount} page${pageCount === 1 ? '' : 's'}`,
        'page_out_of_range',
      );
    }
    const step = to >= from ? 1 : -1;
    for (let page = from; ; page += step) {
      pages.push(page);
      if (pages.length > maxPages)
        refuse(`the selection has more than ${maxPages} pages, the most a result may have`, 'too_many_pages');
      if (page === to) break;
    }
  }
  return pages;
}
