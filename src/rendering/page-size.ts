/**
 * What a valid paper size in a template's page setup is: a named `format`, or a custom `width` and
 * `height` (page lengths, page-length.ts). The one definition: the template schema takes its format
 * names and length rule from here, saving refuses what `pageSizeProblem` refuses, the print
 * parameters take their inches from `paperSizeInches`, and the studio offers the same list and checks
 * with the same function (issue 13: "any paper size `@page` can express is offered in page setup").
 * Only page-length.ts is imported: the studio bundles this file as it is.
 */
import { isPageLength, pageLengthInches, PAGE_LENGTH_UNITS_TEXT } from './page-length.js';

/**
 * Named paper sizes, portrait, in inches. Every `@page { size }` keyword of CSS Paged Media (A3–A5,
 * B4, B5, JIS-B4, JIS-B5, letter, legal, ledger) plus the rest of the ISO A series (A0–A2, A6). The
 * five of the first version (A3, A4, A5, Letter, Legal) keep puppeteer's inch values so existing
 * templates print exactly as before; the others are their millimetre sizes converted exactly.
 */
export const PAPER_FORMATS = {
  A0: { width: 33.1, height: 46.8 },
  A1: { width: 23.4, height: 33.1 },
  A2: { width: 16.54, height: 23.4 },
  A3: { width: 11.7, height: 16.54 },
  A4: { width: 8.27, height: 11.7 },
  A5: { width: 5.83, height: 8.27 },
  A6: { width: 105 / 25.4, height: 148 / 25.4 },
  B4: { width: 250 / 25.4, height: 353 / 25.4 },
  B5: { width: 176 / 25.4, height: 250 / 25.4 },
  'JIS-B4': { width: 257 / 25.4, height: 364 / 25.4 },
  'JIS-B5': { width: 182 / 25.4, height: 257 / 25.4 },
  Letter: { width: 8.5, height: 11 },
  Legal: { width: 8.5, height: 14 },
  Ledger: { width: 11, height: 17 },
} as const;

/** A named paper size. */
export type PaperFormat = keyof typeof PAPER_FORMATS;

/** The names, in table order (the schema's enum and the studio's list). */
export const PAPER_FORMAT_NAMES = Object.keys(PAPER_FORMATS) as PaperFormat[];

/** The paper part of a page setup. */
export interface PaperSize {
  format?: string;
  width?: string;
  height?: string;
}

/**
 * The longest side a page may have: Chromium prints no page past 65,535 pt (910 in; measured, issue 49:
 * a longer one failed every render with a 500), so a round bound below it (22.86 m, 86,400 px). A page
 * setup is checked against it here; a CSS `@page { size }` by the browser, when a print fails (page-rule-size.ts).
 */
export const MAX_PAGE_LENGTH_INCHES = 900;

/** Why a page setup's paper size cannot be printed (which field, what to do), or null when it can. */
export function pageSizeProblem(
  page: PaperSize | null | undefined,
): { field: 'format' | 'width' | 'height'; message: string } | null {
  if (!page) return null;
  const { format, width, height } = page;
  if (format !== undefined && !(format in PAPER_FORMATS))
    return {
      field: 'format',
      message: `page.format must be one of ${PAPER_FORMAT_NAMES.join(', ')} (or give page.width and page.height)`,
    };
  for (const [field, value] of [
    ['width', width],
    ['height', height],
  ] as const) {
    if (value !== undefined && (!isPageLength(value) || pageLengthInches(value) === 0)) {
      return {
        field,
        message: `page.${field} must be a number above 0 with ${PAGE_LENGTH_UNITS_TEXT} (e.g. "210mm"); got "${value.slice(0, 40)}"`,
      };
    }
    if (value !== undefined && pageLengthInches(value)! > MAX_PAGE_LENGTH_INCHES) {
      return {
        field,
        message: `page.${field} may be at most ${MAX_PAGE_LENGTH_INCHES}in (22.86 m, ${MAX_PAGE_LENGTH_INCHES * 96}px): the browser that prints templates cannot print a longer page; got "${value.slice(0, 40)}"`,
      };
    }
  }
  if ((width === undefined) !== (height === undefined)) {
    return {
      field: width === undefined ? 'width' : 'height',
      message: 'page.width and page.height go together: give both for a custom paper size, or neither',
    };
  }
  if (width !== undefined && format !== undefined) {
    return { field: 'format', message: 'Give either page.format or page.width and page.height, not both' };
  }
  return null;
}

/** The paper in inches, portrait as given: custom width × height, else the format (A4 by default). */
export function paperSizeInches(page: PaperSize | null | undefined): { width: number; height: number } {
  if (page?.width !== undefined && page.height !== undefined)
    return { width: pageLengthInches(page.width) ?? 0, height: pageLengthInches(page.height) ?? 0 };
  return PAPER_FORMATS[(page?.format ?? 'A4') as PaperFormat] ?? PAPER_FORMATS.A4;
}

/**
 * An image template's canvas as a page: one page the canvas's size in CSS pixels, no margins. Its
 * previews (stamped PDFs, free) print on it, so they have the canvas's shape, as the image has.
 */
export function canvasPage(canvas: { width: number; height: number }): {
  width: string;
  height: string;
  margin: { top: string; right: string; bottom: string; left: string };
} {
  return {
    width: `${canvas.width}px`,
    height: `${canvas.height}px`,
    margin: { top: '0', right: '0', bottom: '0', left: '0' },
  };
}
