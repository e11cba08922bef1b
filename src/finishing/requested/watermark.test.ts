/**
 * The watermark on its own (no service): a PDF/A-2b file stays conformant to the service's own check
 * once marked, the text is found by pdftotext only on the pages named, and an `under` mark hides
 * behind an opaque page where an `over` one shows (poppler's pixels).
 */
import { PDFDocument, StandardFonts, rgb } from '@cantoo/pdf-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { pdfPagePixels, pdfPageText } from '../../../test/support/documents/pdf-tools.js';
import { checkPdfA } from '../pdfa-check.js';
import { toPdfA } from '../pdfa.js';
import { drawWatermark, prepareWatermark } from './watermark.js';

let two: Buffer;
const noAssets = async () => undefined;
const prepare = (request: Parameters<typeof prepareWatermark>[0]) => prepareWatermark(request, { accountId: 'acc', readAsset: noAssets, loc: ['body', 'watermark'] });

beforeAll(async () => {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (const n of [1, 2]) doc.addPage([400, 500]).drawText(`Body ${n}`, { x: 30, y: 400, size: 18, font });
  two = Buffer.from(await doc.save());
});

describe('drawWatermark', () => {
  it('keeps a PDF/A-2b file conformant to the service\'s own check', async () => {
    const archival = await toPdfA(two, 'pdf/a-2b');
    const marked = await drawWatermark(archival, await prepare({ text: 'Ελληνικά COPY' }), { strictPages: false, loc: [] });
    expect(await checkPdfA(marked, 2)).toEqual([]);
    expect(pdfPageText(marked, 2)).toContain('Ελληνικά COPY');
  });

  it('marks the pages named only, skipping pages past the end of a generated document', async () => {
    const marked = await drawWatermark(two, await prepare({ text: 'ONLY TWO', pages: '2, 7' }), { strictPages: false, loc: [] });
    expect(pdfPageText(marked, 1)).not.toContain('ONLY TWO');
    expect(pdfPageText(marked, 2)).toContain('ONLY TWO');
  });

  it('hides an `under` mark behind an opaque page and shows an `over` one', async () => {
    const doc = await PDFDocument.create();
    doc.addPage([400, 500]).drawRectangle({ x: 0, y: 0, width: 400, height: 500, color: rgb(0, 0, 0) });
    const dark = Buffer.from(await doc.save());
    const redPixels = async (layer: 'over' | 'under') => {
      const marked = await drawWatermark(dark, await prepare({ text: 'LAYER', color: '#FF0000', opacity: 1, font_size: 60, layer }), { strictPages: false, loc: [] });
      const { rgb: pixels } = pdfPagePixels(marked, 1);
      let red = 0;
      for (let i = 0; i < pixels.length; i += 3) if (pixels[i]! > 150 && pixels[i + 1]! < 80) red += 1;
      return red;
    };
    expect(await redPixels('over')).toBeGreaterThan(50);
    expect(await redPixels('under')).toBe(0);
  });
});
