/**
 * The bounds on what one document may cost (issue 15: 960 bytes of SVG became a 99 MB PDF, four
 * small PNGs a 400 MB one that ended the process, one PNG took a Chromium process to 3.1 GB).
 * Each is a setting (the header/footer bound a constant, issue 37); a document past one fails with
 * `DOCUMENT_TOO_LARGE` (422, refunded like every failed render) and a message naming the bound. docs/rendering.md "Bounded
 * documents" says what each one measures and what it cannot see.
 */
import { AppError } from '../../shared/errors.js';

/** Which bound a document went past (the `bound` label of `pressroom_document_bounds_hit_total`). */
export type DocumentBound = 'bytes' | 'pages' | 'image_pixels' | 'memory' | 'layers' | 'header_footer' | 'page_size';

/** The per-document limits the print step enforces. */
export interface DocumentBounds {
  /** The PDF as Chromium streams it, before preview stamp, metadata or PDF/A. */
  maxDocumentBytes: number;
  maxPages: number;
  /** Decoded pixels of all the document's images together (width × height of each distinct image). */
  maxImagePixels: number;
}

/** The PDF grew past `limitBytes` while it was read from Chromium. */
export function tooManyBytes(limitBytes: number): AppError {
  return tooLarge(
    'bytes',
    `The PDF grew past ${formatBytes(limitBytes)} (PRESSROOM_MAX_DOCUMENT_BYTES) and was stopped; split the document or make its images smaller`,
    {
      limitBytes,
    },
  );
}

/** The document has more than `limit` pages. */
export function tooManyPages(limit: number): AppError {
  return tooLarge(
    'pages',
    `The document has more than ${limit} pages (PRESSROOM_MAX_PAGES); split it into smaller documents`,
    { limitPages: limit },
  );
}

/** The document's images decode to `pixels`, more than `limit`. */
export function tooManyImagePixels(pixels: number, limit: number): AppError {
  return tooLarge(
    'image_pixels',
    `The document's images decode to ${formatMegapixels(pixels)}, more than the ${formatMegapixels(limit)} allowed (PRESSROOM_MAX_IMAGE_PIXELS); scale the images down before embedding them`,
    { imagePixels: pixels, limitImagePixels: limit },
  );
}

/** A Chromium process printing the document went past `limitMb` and was stopped. */
export function tooMuchMemory(limitMb: number): AppError {
  return tooLarge(
    'memory',
    `Rendering the document took more than ${limitMb} MB of memory in Chromium (PRESSROOM_RENDERER_MEMORY_MB) and was stopped; make its images, filters or scripts lighter, or send fewer pages per document: Chromium holds every page of a document while it prints it, about 15 MB for a page of a dense table (docs/long-documents.md, "Long tables")`,
    {
      limitMb,
    },
  );
}

/**
 * An image template's output has `layers` layer elements, more than the `limit` image modifications
 * work on (a constant, not a setting: templates/layers/template-layers.ts MAX_TEMPLATE_LAYERS).
 */
export function tooManyLayers(layers: number, limit: number): AppError {
  return tooLarge(
    'layers',
    `The template produced ${layers} layers (elements with data-layer or data-layer-name); modifications apply to templates with at most ${limit}. Give fewer elements a layer name, or render without modifications`,
    { layers, limitLayers: limit },
  );
}

/**
 * The header or footer would be `chars` characters once its images and fonts are written into it as
 * `data:` URIs, more than `limitChars` (a constant, HEADER_FOOTER_MAX_CHARS: not a setting).
 */
export function headerFooterTooLarge(part: 'header' | 'footer', chars: number, limitChars: number): AppError {
  return new AppError(
    'DOCUMENT_TOO_LARGE',
    `The page ${part} (page.${part}_html) would be ${chars} characters (${formatBytes(chars)}) once its images and fonts are written into it, more than the ${limitChars} (${formatBytes(limitChars)}) a header or footer may carry. ` +
      `Chromium's ${part} loads nothing, so every use of an image or font in it carries the whole file: use each one once, make it smaller, or put it in the body.`,
    { details: { bound: 'header_footer', part, chars, limitChars } },
  );
}

/** The document's CSS `@page { size }` is longer than Chromium prints (issue 49: it was a 500 at every render). */
export function cssPageTooLong(size: string, maxInches: number): AppError {
  return new AppError(
    'DOCUMENT_TOO_LARGE',
    `The document's CSS sets its page to ${JSON.stringify(size.slice(0, 80))}, longer than the ${maxInches}in (22.86 m) a side the browser can print. Give @page a smaller size.`,
    { details: { bound: 'page_size', maxInches } },
  );
}

/** The bound a DOCUMENT_TOO_LARGE error names, if `error` is one. */
export function boundOf(error: unknown): DocumentBound | undefined {
  if (!(error instanceof AppError) || error.code !== 'DOCUMENT_TOO_LARGE') return undefined;
  return error.details?.bound as DocumentBound | undefined;
}

function tooLarge(bound: DocumentBound, message: string, details: Record<string, number>): AppError {
  return new AppError('DOCUMENT_TOO_LARGE', message, { details: { bound, ...details } });
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 * 1024) return `${Math.round((bytes / 1024 / 1024 / 1024) * 10) / 10} GiB`;
  if (bytes >= 1024 * 1024) return `${Math.round((bytes / 1024 / 1024) * 10) / 10} MiB`;
  if (bytes >= 1024) return `${Math.round((bytes / 1024) * 10) / 10} KiB`;
  return `${bytes} bytes`;
}

function formatMegapixels(pixels: number): string {
  return `${Math.round((pixels / 1_000_000) * 10) / 10} megapixels`;
}
