/**
 * Maps a template's page setup to Chromium's printToPDF parameters. CSS `@page` size and margins
 * in the document win over these (`preferCSSPageSize`), as print authors expect.
 */
import { AppError } from '../shared/errors.js';
import type { PrintParams } from '../browser/pages/print-page.js';
import { withHeaderFooterDefaults } from './html-assembly.js';
import { PAGE_LENGTH_UNITS_TEXT, pageLengthInches } from './page-length.js';
import { pageSizeProblem, paperSizeInches } from './page-size.js';
import type { PaperFormat } from './page-size.js';

/** Paper, margins and running header/footer (both are templates, see `pageNumber`/`totalPages`). */
export interface PageSetup {
  /** A named paper size (page-size.ts); default A4. */
  format?: PaperFormat;
  /** A custom paper size: both page lengths, instead of `format` (page-size.ts). */
  width?: string;
  height?: string;
  orientation?: 'portrait' | 'landscape';
  margin?: { top?: string; right?: string; bottom?: string; left?: string };
  header_html?: string;
  footer_html?: string;
  /**
   * Tagged (accessible) PDF with its structure tree and outline, or not (`false`: faster and smaller,
   * but screen readers get no reading order or headings; docs/rendering.md "Tagged or not").
   * @defaultValue true
   */
  tagged?: boolean;
  /** PDF/UA-1 by default for this template's documents (a create request's `pdf_ua` overrides it; docs/accessibility.md). @defaultValue false */
  pdf_ua?: boolean;
}

/** Room left for a header or footer when the template gives no margin on that side. */
const HEADER_FOOTER_DEFAULT_MARGIN = '15mm';

// Chromium prints its own date/title/URL header when a template is empty; an empty span prints nothing.
const EMPTY_TEMPLATE = '<span></span>';

export interface PrintInputs {
  page: PageSetup | null | undefined;
  headerHtml: string | undefined;
  footerHtml: string | undefined;
  /** The page bound (PRESSROOM_MAX_PAGES): Chromium prints at most one page more, so that going past it shows. */
  maxPages?: number;
  /** The request's choice, over the template's `page.tagged`; both absent → tagged. */
  tagged?: boolean;
}

/** printToPDF parameters: paper (page-size.ts), margins, header/footer with readable defaults, tagged PDF with outline (unless `tagged` or `page.tagged` is false). */
export function buildPrintParams({ page, headerHtml, footerHtml, maxPages, tagged }: PrintInputs): PrintParams {
  const sizeProblem = pageSizeProblem(page);
  if (sizeProblem) throw new AppError('INVALID_REQUEST', sizeProblem.message);
  const paper = paperSizeInches(page);
  const hasHeader = headerHtml !== undefined && headerHtml.trim() !== '';
  const hasFooter = footerHtml !== undefined && footerHtml.trim() !== '';
  const margin = page?.margin ?? {};
  // Chromium builds the outline from the structure tree: an untagged PDF gets neither.
  const accessible = tagged ?? page?.tagged ?? true;
  const params: PrintParams = {
    printBackground: true,
    preferCSSPageSize: true,
    generateTaggedPDF: accessible,
    generateDocumentOutline: accessible,
    landscape: page?.orientation === 'landscape',
    paperWidth: paper.width,
    paperHeight: paper.height,
    marginTop: toInches('top', margin.top ?? (hasHeader ? HEADER_FOOTER_DEFAULT_MARGIN : undefined)),
    marginRight: toInches('right', margin.right),
    marginBottom: toInches('bottom', margin.bottom ?? (hasFooter ? HEADER_FOOTER_DEFAULT_MARGIN : undefined)),
    marginLeft: toInches('left', margin.left),
  };
  // Chromium 156 caps a range at the document's last page (a 2-page document prints 2 pages for
  // "1-2001"), and page 1 always exists, so this never fails a short document. Layout still covers
  // the whole document; printing (the costly part) stops here.
  if (maxPages !== undefined) params.pageRanges = `1-${maxPages + 1}`;
  if (hasHeader || hasFooter) {
    params.displayHeaderFooter = true;
    params.headerTemplate = hasHeader ? withHeaderFooterDefaults(headerHtml) : EMPTY_TEMPLATE;
    params.footerTemplate = hasFooter ? withHeaderFooterDefaults(footerHtml) : EMPTY_TEMPLATE;
  }
  return params;
}

/** A margin in inches: absent is 0; anything else must be a page length (page-length.ts), as at save. */
function toInches(side: string, value: string | undefined): number {
  if (value === undefined) return 0;
  const inches = pageLengthInches(value);
  if (inches === undefined) {
    throw new AppError(
      'INVALID_REQUEST',
      `page.margin.${side} must be 0 or a number with ${PAGE_LENGTH_UNITS_TEXT} (e.g. "12mm"); got "${value.slice(0, 40)}"`,
    );
  }
  return inches;
}
