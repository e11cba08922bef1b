/**
 * The watermark on its own (no service): a PDF/A-2b file stays conformant to the service's own check
 * once marked, the text is found by pdftotext only on the pages named, and an `under` mark hides
 * behind an opaque page where an `over` one shows (poppler's pixels).
 */
import { PDFDocument, StandardFonts, degrees, rgb } from '@cantoo/pdf-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { pdfPagePixels, pdfPageText } from '../../../test/support/documents/pdf-tools.js';
import { checkPdfA } from '../pdfa-check.js';
import { toPdfA } from '../pdfa.js';
import { drawWatermark, prepareWatermark } from './watermark.js';

let two: Buffer;
const noAssets = async () => undefined;
const prepare = (request: Parameters<typeof prepareWatermark>[0]) =>
  prepareWatermark(request, { accountId: 'acc', readAsset: noAssets, loc: ['body', 'watermark'] });

beforeAll(async () => {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const n of [1, 2]) doc.addPage([400, 500]).drawText(`Body ${n}`, { x: 30, y: 400, size: 18, font });
  two = Buffer.from(await doc.save());
});

describe('drawWatermark', () => {
  it("keeps a PDF/A-2b file conformant to the service's own check", async () => {
    const archival = await toPdfA(two, 'pdf/a-2b');
    const marked = await drawWatermark(archival, await prepare({ text: 'Ελληνικά COPY' }), {
      strictPages: false,
      loc: [],
    });
    expect(await checkPdfA(marked, 2)).toEqual([]);
    expect(pdfPageText(marked, 2)).toContain('Ελληνικά COPY');
  });

  it('marks the pages named only, skipping pages past the end of a generated document', async () => {
    const marked = await drawWatermark(two, await prepare({ text: 'ONLY TWO', pages: '2, 7' }), {
      strictPages: false,
      loc: [],
    });
    expect(pdfPageText(marked, 1)).not.toContain('ONLY TWO');
    expect(pdfPageText(marked, 2)).toContain('ONLY TWO');
  });

  it('places and turns the mark on the page as a reader sees it, whatever its /Rotate', async () => {
    const doc = await PDFDocument.create();
    for (const turn of [0, 90, 180, 270]) doc.addPage([400, 600]).setRotation(degrees(turn));
    const marked = await drawWatermark(
      Buffer.from(await doc.save()),
      await prepare({ text: 'TOPMARK', position: 'top', rotation: 0, font_size: 24, opacity: 1 }),
      { strictPages: false, loc: [] },
    );
    for (const page of [1, 2, 3, 4]) {
      // pdftoppm shows the page turned as a viewer does: the mark's pixels, their box.
      const { width, height, rgb } = pdfPagePixels(marked, page, 40);
      let [left, top, right, bottom] = [width, height, -1, -1];
      for (let y = 0; y < height; y++) {
        for (let x = 0; x < width; x++) {
          if (rgb[(y * width + x) * 3]! > 200) continue;
          [left, top, right, bottom] = [Math.min(left, x), Math.min(top, y), Math.max(right, x), Math.max(bottom, y)];
        }
      }
      expect(right, `page ${page}`).toBeGreaterThan(0);
      // A page turned a quarter is shown landscape.
      expect(width > height, `page ${page}`).toBe(page % 2 === 0);
      // Near the top the reader sees, centred across, and reading across (wider than tall).
      expect(bottom, `page ${page}`).toBeLessThan(height * 0.2);
      expect(Math.abs((left + right) / 2 - width / 2), `page ${page}`).toBeLessThan(width * 0.05);
      expect(right - left, `page ${page}`).toBeGreaterThan(3 * (bottom - top));
    }
  });

  it('hides an `under` mark behind an opaque page and shows an `over` one', async () => {
    const doc = await PDFDocument.create();
    doc.addPage([400, 500]).drawRectangle({ x: 0, y: 0, width: 400, height: 500, color: rgb(0, 0, 0) });
    const dark = Buffer.from(await doc.save());
    const redPixels = async (layer: 'over' | 'under') => {
      const marked = await drawWatermark(
        dark,
        await prepare({ text: 'LAYER', color: '#FF0000', opacity: 1, font_size: 60, layer }),
        { strictPages: false, loc: [] },
      );
      const { rgb: pixels } = pdfPagePixels(marked, 1);
      let red = 0;
      for (let i = 0; i < pixels.length; i += 3) if (pixels[i]! > 150 && pixels[i + 1]! < 80) red += 1;
      return red;
    };
    expect(await redPixels('over')).toBeGreaterThan(50);
    expect(await redPixels('under')).toBe(0);
  });
});
