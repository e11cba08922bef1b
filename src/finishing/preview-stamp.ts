/**
 * The PREVIEW stamp of free previews, drawn onto the printed PDF after Chromium is done with it.
 *
 * Why after printing: anything drawn by Chromium (the document, its header or footer template) is
 * reachable by the template's own HTML and CSS. A header-template watermark was hidden with
 * `html{display:none}` in `page.header_html`, `body{opacity:0}`, `clip-path`, a scaled-to-zero
 * stamp…, which made a free preview identical to a paid document. Here the stamp is page content
 * appended to every page of the finished file, after (so on top of) everything Chromium drew, and no
 * template text takes part in it.
 *
 * What is drawn on each page: the page's own content is wrapped in q/Q by pdf-lib (so no transform,
 * clip or colour it leaves behind applies), then a semi-transparent red "PREVIEW" in standard-14
 * Helvetica-Bold with a darker outline (visible on white and on red backgrounds), along the diagonal
 * of the visible page area (CropBox, honouring /Rotate), sized to fit it. A page much longer than it
 * is wide (a strip, a receipt) or very large (a poster) gets a grid of such stamps, so no stretch of it
 * is left bare and no stamp needs a font size some viewers refuse to draw. The stamp sits in a
 * `/Span <</ActualText (PREVIEW)>>` marked-content sequence: text extraction (pdftotext, copy and
 * paste) otherwise splits diagonal glyphs into single letters, and ActualText is the PDF's own way to
 * say which text a run of glyphs stands for.
 *
 * Cost (bench/costs/preview-stamp-bench.ts; figures in docs/performance-log/2026-11-23-to-28-pdf-libraries.md): the whole file is parsed and written again,
 * on the event loop, yielding every OBJECTS_PER_TICK objects. Writing the file anew, rather than
 * appending an incremental update, also means the unstamped original is not left inside the file.
 */
import {
  PDFDocument,
  PDFName,
  PDFOperator,
  PDFOperatorNames,
  StandardFonts,
  TextRenderingMode,
  beginText,
  endText,
  popGraphicsState,
  pushGraphicsState,
  rotateAndSkewTextRadiansAndTranslate,
  setFillingRgbColor,
  setFontAndSize,
  setGraphicsState,
  setLineWidth,
  setStrokingRgbColor,
  setTextRenderingMode,
  showText,
  type PDFFont,
  type PDFPage,
  type PDFRef,
} from '@cantoo/pdf-lib';
import { AppError } from '../shared/errors.js';
import { prepareRewrite } from '../pdf/pdf-rewrite.js';

const STAMP_TEXT = 'PREVIEW';
/** The marked-content properties (an inline dictionary, written as it is: pdf-lib types operands narrowly). */
const ACTUAL_TEXT = `<< /ActualText (${STAMP_TEXT}) >>`;
/** Fill and outline opacity: the document stays readable under the stamp. */
const FILL_OPACITY = 0.25;
const OUTLINE_OPACITY = 0.5;
const FILL_RGB = [0.86, 0.1, 0.1] as const;
const OUTLINE_RGB = [0.55, 0, 0] as const;
/** Share of the cell's width and height the stamp's rotated box may take. */
const FIT = 0.8;
/** Helvetica-Bold's cap height per unit of font size (its AFM: CapHeight 718). */
const CAP_HEIGHT = 0.718;
/**
 * Pages are cut into a grid of cells, one stamp each. No cell side is longer than this (40 in): the
 * stamp on a 200-inch page (Chromium's largest, 14,400 pt) would need a ~3,000 pt font, and poppler's
 * Splash renderer (pdftoppm, Okular) draws no text above ~1,400 pt, whatever the resolution (tried with
 * poppler 22.12: 1,400 drawn, 1,500 blank). Cells of at most 2,880 pt keep the font under ~620 pt.
 */
const MAX_CELL_SIDE_PT = 2880;
/** A cell is at most this much longer than it is wide, so a strip or a receipt is stamped all along. */
const MAX_CELL_ASPECT = 2;
/** Chromium's thinnest strips (1 pt by 14,400 pt) would want ~7,200 cells; past this many in a row or
 * column the cells simply get longer. */
const MAX_CELLS_PER_LINE = 32;
/** As in pdfa.ts: pdf-lib parses and writes on the event loop; yield every N objects. */
const OBJECTS_PER_TICK = 1000;

/** Draws a large diagonal PREVIEW on every page of a printed PDF; throws RENDER_FAILED if it cannot. */
export async function stampPreview(pdf: Uint8Array): Promise<Buffer> {
  try {
    const doc = await PDFDocument.load(pdf, { updateMetadata: false, parseSpeed: OBJECTS_PER_TICK });
    const font = await doc.embedFont(StandardFonts.HelveticaBold);
    const graphicsState = doc.context.register(
      doc.context.obj({ Type: 'ExtGState', ca: FILL_OPACITY, CA: OUTLINE_OPACITY }),
    );
    for (const page of doc.getPages()) stampPage(page, font, graphicsState);
    prepareRewrite(doc);
    const bytes = await doc.save({
      useObjectStreams: false,
      addDefaultPage: false,
      updateFieldAppearances: false,
      objectsPerTick: OBJECTS_PER_TICK,
    });
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  } catch (cause) {
    // Never fall back to the unstamped file: a preview that cannot be stamped is not handed out.
    throw new AppError('RENDER_FAILED', 'The preview could not be stamped', { cause });
  }
}

/** The visible area of a page as the reader sees it (after /Rotate). */
interface PageGeometry {
  x: number;
  y: number;
  width: number;
  height: number;
  /** /Rotate in degrees, one of 0, 90, 180, 270 (clockwise, as a viewer turns the page). */
  rotation: number;
}

function geometryOf(page: PDFPage): PageGeometry {
  const box = page.getCropBox();
  const rotation = (((Math.round(page.getRotation().angle / 90) * 90) % 360) + 360) % 360;
  return {
    x: Math.min(box.x, box.x + box.width),
    y: Math.min(box.y, box.y + box.height),
    width: Math.abs(box.width),
    height: Math.abs(box.height),
    rotation,
  };
}

function stampPage(page: PDFPage, font: PDFFont, graphicsState: PDFRef): void {
  const geometry = geometryOf(page);
  const fontKey = page.node.newFontDictionary('PressroomStamp', font.ref);
  const stateKey = page.node.newExtGState('PressroomStamp', graphicsState);
  const glyphs = font.encodeText(STAMP_TEXT);
  const operators = [
    PDFOperator.of(PDFOperatorNames.BeginMarkedContentSequence, [PDFName.of('Span'), ACTUAL_TEXT]),
    pushGraphicsState(),
    setGraphicsState(stateKey),
    setFillingRgbColor(...FILL_RGB),
    setStrokingRgbColor(...OUTLINE_RGB),
    setTextRenderingMode(TextRenderingMode.FillAndOutline),
  ];
  for (const cell of cellsOf(geometry)) {
    const { size, angle, x, y } = placeStamp(cell, geometry.rotation, font.widthOfTextAtSize(STAMP_TEXT, 1));
    operators.push(
      setLineWidth(size / 40),
      beginText(),
      setFontAndSize(fontKey, size),
      rotateAndSkewTextRadiansAndTranslate(angle, 0, 0, x, y),
      showText(glyphs),
      endText(),
    );
  }
  operators.push(popGraphicsState(), PDFOperator.of(PDFOperatorNames.EndMarkedContent));
  // pushOperators normalises the page first: its existing content streams are wrapped in q … Q.
  page.pushOperators(...operators);
}

/** A rectangle in the page's user space, to hold one stamp. */
interface Cell {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** The page cut into a grid of cells no longer than MAX_CELL_SIDE_PT and MAX_CELL_ASPECT times their width. */
function cellsOf({ x, y, width, height }: PageGeometry): Cell[] {
  let columns = Math.max(1, Math.ceil(width / MAX_CELL_SIDE_PT));
  let rows = Math.max(1, Math.ceil(height / MAX_CELL_SIDE_PT));
  if (height > 0) columns = Math.max(columns, Math.ceil(width / ((height / rows) * MAX_CELL_ASPECT)));
  if (width > 0) rows = Math.max(rows, Math.ceil(height / ((width / columns) * MAX_CELL_ASPECT)));
  columns = Math.min(columns, MAX_CELLS_PER_LINE);
  rows = Math.min(rows, MAX_CELLS_PER_LINE);
  const cells: Cell[] = [];
  for (let row = 0; row < rows; row++) {
    for (let column = 0; column < columns; column++) {
      cells.push({
        x: x + (column * width) / columns,
        y: y + (row * height) / rows,
        width: width / columns,
        height: height / rows,
      });
    }
  }
  return cells;
}

/**
 * Font size, angle and text origin (user space) that put the stamp on the cell's diagonal, reading
 * from the bottom-left to the top-right corner as the page is shown, centred and fitted to the cell.
 */
function placeStamp(
  cell: Cell,
  rotation: number,
  widthPerUnit: number,
): { size: number; angle: number; x: number; y: number } {
  const quarterTurned = rotation % 180 !== 0;
  const shownWidth = quarterTurned ? cell.height : cell.width;
  const shownHeight = quarterTurned ? cell.width : cell.height;
  const shownAngle = Math.atan2(shownHeight, shownWidth);
  const cos = Math.cos(shownAngle);
  const sin = Math.sin(shownAngle);
  const fitted =
    FIT *
    Math.min(
      shownWidth / (widthPerUnit * cos + CAP_HEIGHT * sin),
      shownHeight / (widthPerUnit * sin + CAP_HEIGHT * cos),
    );
  // A degenerate (zero-area) page shows nothing anyway; keep the operators valid.
  const size = Number.isFinite(fitted) && fitted > 0 ? fitted : 1;
  // A viewer turns the page clockwise by /Rotate, so the text is turned that much further in user space.
  const angle = shownAngle + (rotation * Math.PI) / 180;
  const halfWidth = (widthPerUnit * size) / 2;
  const halfHeight = (CAP_HEIGHT * size) / 2;
  const centreX = cell.x + cell.width / 2;
  const centreY = cell.y + cell.height / 2;
  return {
    size,
    angle,
    x: centreX - halfWidth * Math.cos(angle) + halfHeight * Math.sin(angle),
    y: centreY - halfWidth * Math.sin(angle) - halfHeight * Math.cos(angle),
  };
}
