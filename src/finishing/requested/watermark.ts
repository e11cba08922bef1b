/**
 * A watermark on chosen pages of a PDF: a text (in a font embedded for it, watermark-fonts.ts; laid out
 * by Chromium when its script needs shaping, text-layout.ts) or an image from the account's asset library, at an opacity, a rotation and one of nine positions, over
 * the page's content or under it. Used by the after-print step (finishing.ts) and the
 * `/v1/pdf-tools/watermark` tool alike.
 *
 * How: the mark is made once as a one-page PDF of its own size with @libpdf/core (which embeds and
 * subsets a TrueType font, where @cantoo/pdf-lib needs fontkit, not installed), embedded in the
 * document as one Form XObject, and drawn on each page named: appended (over) or prepended (under)
 * to the page's content, in q/Q, turned about its centre. A text mark is wrapped in a marked-content
 * span with /ActualText, so text extraction reads the watermark as one string rather than the single
 * letters a rotated line otherwise falls into. The document is then written anew (not as an
 * incremental update), so the unmarked pages are not left inside the file.
 *
 * Everything the customer can get wrong (text no font draws, an asset missing or not an image, a bad
 * page selection) is found by `prepareWatermark`, before any charge.
 */
import {
  PDF,
  PdfArray,
  PdfDict,
  PdfStream,
  PdfString,
  ops,
  rgb,
  type PDFEmbeddedPage,
  type PDFPage,
  type PdfRef,
} from '@libpdf/core';
import { ValidationError } from '../../shared/errors.js';
import { parsePageSelection, selectedPages, type PageSelection } from '../../pdf/page-selection.js';
import { needsShaping, watermarkFont } from './watermark-fonts.js';
import type { TextLayout } from './text-layout.js';
import type { WatermarkRequest } from './finishing-requests.js';

/** Where the mark sits on the page. */
export type WatermarkPosition = NonNullable<WatermarkRequest['position']>;

/** An asset's bytes and type, as the asset library hands them over. */
export type AssetReader = (
  accountId: string,
  name: string,
) => Promise<{ body: Buffer; contentType: string } | undefined>;

/** A watermark checked and ready to draw. */
export interface PreparedWatermark {
  mark: /** `accountId`: whose mark it is; a kept mark serves its own account only. */
    | {
        kind: 'text';
        text: string;
        font: Uint8Array;
        fontSize: number;
        color: [number, number, number];
        accountId: string;
      }
    /** Text Chromium laid out (a script that needs shaping): its one-page PDF, and the text it reads as. */
    | { kind: 'laid-out-text'; text: string; pdf: Uint8Array }
    | { kind: 'image'; bytes: Buffer; contentType: string }
    /** The first page of a PDF asset, drawn as vector content (a logo, a stamp). */
    | { kind: 'pdf'; bytes: Buffer };
  opacity: number;
  /** Degrees, counter-clockwise. */
  rotation: number;
  position: WatermarkPosition;
  layer: 'over' | 'under';
  /** null: every page. */
  pages: PageSelection | null;
}

/** Defaults, as documented in the schema (finishing-requests.ts). */
const DEFAULTS = {
  opacity: 0.3,
  rotation: 45,
  fontSize: 48,
  color: '#808080',
  position: 'center',
  layer: 'over',
} as const;
/** Space left between a corner or edge mark and the page's edge. */
const EDGE_MARGIN_PT = 24;
/** An image mark is shrunk to fit this share of the page (it is never enlarged). */
const IMAGE_FIT = 0.8;
const IMAGE_TYPES = new Set(['image/png', 'image/jpeg']);

function refuse(loc: (string | number)[], msg: string, type: string): never {
  throw new ValidationError([{ loc, msg, type }]);
}

/** Checks a watermark request (422 at `loc` + field) and loads what it draws. */
export async function prepareWatermark(
  request: WatermarkRequest,
  context: { accountId: string; readAsset: AssetReader; loc: (string | number)[]; layOutText?: TextLayout },
): Promise<PreparedWatermark> {
  const { loc } = context;
  const hasText = request.text != null && request.text.trim() !== '';
  const hasAsset = request.asset != null;
  if (hasText === hasAsset)
    refuse(
      loc,
      'Give the watermark either text or asset (the name of a PNG, JPEG or PDF in your asset library), not both',
      hasText ? 'input_conflict' : 'missing',
    );
  const pages = request.pages == null ? null : selectionAt(request.pages, [...loc, 'pages']);
  const common = {
    opacity: request.opacity ?? DEFAULTS.opacity,
    rotation: request.rotation ?? DEFAULTS.rotation,
    position: request.position ?? DEFAULTS.position,
    layer: request.layer ?? DEFAULTS.layer,
    pages,
  };
  if (hasText) {
    const text = request.text!.trim();
    const [fontSize, color] = [request.font_size ?? DEFAULTS.fontSize, request.color ?? DEFAULTS.color];
    if (context.layOutText && needsShaping(text)) {
      return {
        ...common,
        mark: {
          kind: 'laid-out-text',
          text,
          pdf: await context.layOutText({ accountId: context.accountId, text, fontSize, color }),
        },
      };
    }
    const font = await watermarkFont(text, [...loc, 'text']);
    return {
      ...common,
      mark: { kind: 'text', text, font, fontSize, color: parseColor(color), accountId: context.accountId },
    };
  }
  const asset = await context.readAsset(context.accountId, request.asset!);
  if (!asset)
    refuse(
      [...loc, 'asset'],
      `Your asset library has no asset named "${request.asset}"; upload it with POST /v1/assets`,
      'asset_not_found',
    );
  if (asset.contentType === 'application/pdf') return { ...common, mark: { kind: 'pdf', bytes: asset.body } };
  if (!IMAGE_TYPES.has(asset.contentType))
    refuse(
      [...loc, 'asset'],
      `The asset "${request.asset}" is ${asset.contentType}; a watermark asset must be a PNG or JPEG image, or a PDF`,
      'asset_type',
    );
  return { ...common, mark: { kind: 'image', bytes: asset.body, contentType: asset.contentType } };
}

/** `pages` parsed, its 422 moved to the watermark's own location. */
function selectionAt(text: string, loc: (string | number)[]): PageSelection {
  try {
    return parsePageSelection(text);
  } catch (error) {
    if (error instanceof ValidationError) throw new ValidationError(error.issues.map((issue) => ({ ...issue, loc })));
    throw error;
  }
}

/** `#rrggbb` → 0..1 components (the schema's pattern checked the form). */
function parseColor(hex: string): [number, number, number] {
  const value = Number.parseInt(hex.slice(1), 16);
  return [((value >> 16) & 255) / 255, ((value >> 8) & 255) / 255, (value & 255) / 255];
}

/**
 * The pages (0-based) a watermark goes on. `strict`: a page past the end is a 422 (a tool, whose
 * input is known); otherwise it is skipped (a generated document, whose length was not known when
 * the request was checked).
 */
export function targetPages(
  selection: PageSelection | null,
  pageCount: number,
  options: { strict: boolean; loc: (string | number)[] },
): number[] {
  if (!selection) return Array.from({ length: pageCount }, (_, i) => i);
  if (!options.strict) {
    const named = selection.flatMap(({ from, to }) =>
      Array.from({ length: Math.abs(to - from) + 1 }, (_, i) => (to >= from ? from + i : from - i)),
    );
    return [...new Set(named.filter((p) => p <= pageCount))].map((p) => p - 1);
  }
  try {
    return [...new Set(selectedPages(selection, pageCount, pageCount * 2 + selection.length))].map((p) => p - 1);
  } catch (error) {
    if (error instanceof ValidationError)
      throw new ValidationError(error.issues.map((issue) => ({ ...issue, loc: [...options.loc, 'pages'] })));
    throw error;
  }
}

/** UTF-16BE with its byte-order mark: how a PDF text string carries any script. */
function textString(text: string): PdfString {
  const bytes = [0xfe, 0xff];
  for (let i = 0; i < text.length; i++) bytes.push(text.charCodeAt(i) >> 8, text.charCodeAt(i) & 255);
  return new PdfString(Uint8Array.from(bytes), 'hex');
}

/**
 * Text marks made recently, as their one-page PDFs: an account marks every document alike, and
 * subsetting the font is most of a mark's cost. Keyed by everything that shapes the mark, and by the
 * account: shared, a quick answer would tell one account which text another marks with.
 */
const MADE_MARKS_KEPT = 64;
const madeMarks = new Map<string, Uint8Array>();

async function textMarkPdf(mark: Extract<PreparedWatermark['mark'], { kind: 'text' }>): Promise<Uint8Array> {
  // The candidate fonts (watermark-fonts.ts) differ in length: it tells them apart.
  const key = JSON.stringify([mark.accountId, mark.text, mark.fontSize, mark.color, mark.font.length]);
  const made = madeMarks.get(key);
  if (made) return made;
  const source = PDF.create();
  const font = source.embedFont(mark.font);
  const width = font.widthOfTextAtSize(mark.text, mark.fontSize);
  const height = font.heightAtSize(mark.fontSize);
  const page = source.addPage({ width, height });
  page.drawOperators([ops.beginMarkedContentProps('/Span', new PdfDict([['ActualText', textString(mark.text)]]))]);
  // The baseline sits above the descent, so no glyph leaves the mark's box.
  page.drawText(mark.text, {
    x: 0,
    y: (height - mark.fontSize) / 2 + mark.fontSize * 0.2,
    font,
    size: mark.fontSize,
    color: rgb(...mark.color),
  });
  page.drawOperators([ops.endMarkedContent()]);
  // Saved: the font is written (subset) only when its document is saved.
  const bytes = await source.save({ subsetFonts: true });
  if (madeMarks.size >= MADE_MARKS_KEPT) madeMarks.delete(madeMarks.keys().next().value!);
  madeMarks.set(key, bytes);
  return bytes;
}

/** Chromium's marked content in laid-out text: a span around a shaped cluster (`/Span<</ActualText <…> >> BDC`) and a right-to-left run (`/ReversedChars BMC`); and their ends. */
const CLUSTER_SPAN = /\/Span\s*<<\s*\/ActualText\s*<[0-9A-Fa-f\s]*>\s*>>\s*BDC|\/ReversedChars\s+BMC/g;
const SPAN_END = /(?<![A-Za-z])EMC(?![A-Za-z])/g;

/**
 * Chromium's page of laid-out text, reading as `text` as a whole: a text extractor takes the innermost
 * /ActualText, so Chromium's own spans (one per shaped cluster) are dropped and one span goes around it
 * all — else a turned mark reads as scattered clusters, a right-to-left one in visual order. Left as Chromium made it if it holds any other
 * marked content (untagged prints hold none).
 */
async function readingAs(pdf: Uint8Array, text: string): Promise<PDF> {
  const laidOut = await PDF.load(pdf);
  const page = laidOut.getPage(0)!;
  const resolve = (ref: PdfRef) => laidOut.getObject(ref);
  const contents = page.dict.get('Contents', resolve);
  const streams =
    contents instanceof PdfArray
      ? Array.from({ length: contents.length }, (_, i) => contents.at(i, resolve))
      : [contents];
  if (!streams.every((stream) => stream instanceof PdfStream)) return laidOut;
  const source = (streams as PdfStream[])
    .map((stream) => Buffer.from(stream.getDecodedData()).toString('latin1'))
    .join('\n');
  const spans = source.match(CLUSTER_SPAN)?.length ?? 0;
  const bare = source.replace(CLUSTER_SPAN, '');
  if (/(?<![A-Za-z])(BDC|BMC)(?![A-Za-z])/.test(bare) || (bare.match(SPAN_END)?.length ?? 0) !== spans) return laidOut;
  const opening = `/Span <</ActualText <${Buffer.from(textString(text).bytes).toString('hex')}>>> BDC\n`;
  const content = new PdfStream([], Buffer.from(`${opening}${bare.replace(SPAN_END, '')}\nEMC\n`, 'latin1'));
  page.dict.set('Contents', laidOut.context.register(content));
  return laidOut;
}

/** The mark as a one-page PDF of its own size, embedded into `doc`. */
async function embedMark(
  doc: PDF,
  mark: PreparedWatermark['mark'],
  loc: (string | number)[],
): Promise<PDFEmbeddedPage> {
  if (mark.kind === 'text') return doc.embedPage(await PDF.load(await textMarkPdf(mark)), 0);
  if (mark.kind === 'laid-out-text') return doc.embedPage(await readingAs(mark.pdf, mark.text), 0);
  if (mark.kind === 'pdf') {
    const source = await PDF.load(new Uint8Array(mark.bytes)).catch(() =>
      refuse(
        [...loc, 'asset'],
        'The PDF asset could not be read (damaged, or encrypted); upload a PDF that opens without a password',
        'asset_unreadable',
      ),
    );
    if (source.getPageCount() === 0) refuse([...loc, 'asset'], 'The PDF asset has no page to draw', 'asset_unreadable');
    return doc.embedPage(source, 0);
  }
  const source = PDF.create();
  const image = source.embedImage(mark.bytes);
  const page = source.addPage({ width: image.width, height: image.height });
  page.drawImage(image, { x: 0, y: 0, width: image.width, height: image.height });
  return doc.embedPage(source, 0);
}

/** `top-left` → [top, left]; `top` → [top, center]; `left` → [center, left]. */
function edgesOf(position: WatermarkPosition): [string, string] {
  if (position === 'top' || position === 'bottom') return [position, 'center'];
  if (position === 'left' || position === 'right') return ['center', position];
  const [vertical, horizontal] = position.split('-');
  return [vertical!, horizontal ?? 'center'];
}

/** Where the mark's box goes on `page`, scaled, so that its turned outline stays on the page. */
/**
 * Where the mark goes on `page`, and its angle there. Positions and the angle are as the reader sees the
 * page: a page turned by /Rotate (clockwise, as viewers show it) has its mark placed on the turned page
 * and turned with it, so "top" is the top a reader sees and the text reads at the asked angle.
 */
function placement(
  page: PDFPage,
  mark: PDFEmbeddedPage,
  prepared: PreparedWatermark,
): { x: number; y: number; width: number; height: number; angle: number } {
  const box = page.getCropBox();
  const [left, bottom, boxWidth, boxHeight] = [
    Math.min(box.x, box.x + box.width),
    Math.min(box.y, box.y + box.height),
    Math.abs(box.width),
    Math.abs(box.height),
  ];
  const turn = (((page.rotation ?? 0) % 360) + 360) % 360;
  const sideways = turn === 90 || turn === 270;
  // The page as seen: its width and height swap when it is turned a quarter.
  const [pageWidth, pageHeight] = sideways ? [boxHeight, boxWidth] : [boxWidth, boxHeight];
  const scale =
    prepared.mark.kind !== 'text' && prepared.mark.kind !== 'laid-out-text'
      ? Math.min(1, (IMAGE_FIT * pageWidth) / mark.width, (IMAGE_FIT * pageHeight) / mark.height)
      : 1;
  const width = mark.width * scale;
  const height = mark.height * scale;
  const radians = (prepared.rotation * Math.PI) / 180;
  // Half the turned outline's extent, so an edge mark's corners stay EDGE_MARGIN_PT inside the page.
  const halfX = (width * Math.abs(Math.cos(radians)) + height * Math.abs(Math.sin(radians))) / 2;
  const halfY = (width * Math.abs(Math.sin(radians)) + height * Math.abs(Math.cos(radians))) / 2;
  const [vertical, horizontal] = edgesOf(prepared.position);
  const seenX =
    horizontal === 'left'
      ? EDGE_MARGIN_PT + halfX
      : horizontal === 'right'
        ? pageWidth - EDGE_MARGIN_PT - halfX
        : pageWidth / 2;
  const seenY =
    vertical === 'bottom'
      ? EDGE_MARGIN_PT + halfY
      : vertical === 'top'
        ? pageHeight - EDGE_MARGIN_PT - halfY
        : pageHeight / 2;
  // The seen centre back in the page's own coordinates (undoing the clockwise turn).
  const [ownX, ownY] =
    turn === 90
      ? [boxWidth - seenY, seenX]
      : turn === 180
        ? [boxWidth - seenX, boxHeight - seenY]
        : turn === 270
          ? [seenY, boxHeight - seenX]
          : [seenX, seenY];
  return { x: left + ownX - width / 2, y: bottom + ownY - height / 2, width, height, angle: prepared.rotation + turn };
}

/** The PDF with the watermark drawn on the pages it names. */
export async function drawWatermark(
  pdf: Uint8Array,
  prepared: PreparedWatermark,
  options: { strictPages: boolean; loc: (string | number)[] },
): Promise<Buffer> {
  const doc = await PDF.load(pdf);
  const pages = doc.getPages();
  const targets = targetPages(prepared.pages, pages.length, { strict: options.strictPages, loc: options.loc });
  const mark = await embedMark(doc, prepared.mark, options.loc);
  for (const index of targets) {
    const page = pages[index]!;
    const { x, y, width, height, angle } = placement(page, mark, prepared);
    page.drawPage(mark, {
      x,
      y,
      width,
      height,
      opacity: prepared.opacity,
      rotate: { angle, origin: 'center' },
      background: prepared.layer === 'under',
    });
  }
  // Streams as they are: a PDF/A file's XMP packet must stay unfiltered (readers find it in the raw bytes).
  const bytes = await doc.save({ compressStreams: false });
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
