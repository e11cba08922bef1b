/**
 * The PREVIEW stamp on pages of every shape Chromium can print (landscape, 1 px, a thin strip, the
 * 200-inch maximum), on hundreds of pages, and on rotated pages; a file that cannot be stamped is
 * refused rather than handed out unstamped. What the user sees: the word in the page's text and red
 * on the rendered page.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { PDFDocument, StandardFonts, degrees } from '@cantoo/pdf-lib';
import { isAppError } from '../shared/errors.js';
import { pdfPagePixels, pdfPages, pdfText, redPixelShare } from '../../test/support/documents/pdf-tools.js';
import type { RenderTemplate } from '../rendering/pdf-renderer.js';
import { stampPreview } from './preview-stamp.js';
import { testRenderer } from '../../test/support/documents/rendering-kit.js';
import { createLogger } from '../shared/log.js';
import { createFinishing } from './finishing.js';
import type { RenderRequest } from '../rendering/pdf-renderer.js';

const renderer = testRenderer({ timeoutMs: 120_000 });
const finishing = createFinishing({ threads: 1, logger: createLogger('silent') });
afterAll(async () => {
  await renderer.close();
  await finishing.close();
});

/** A free preview as the service makes one: printed at preview priority, then finished with the stamp. */
async function preview(request: Omit<RenderRequest, 'kind'>): Promise<{ pdf: Buffer }> {
  const printed = await renderer.render({ ...request, kind: 'preview' });
  const finished = await finishing.finish(printed.pdf, {
    accountId: '',
    kind: 'preview',
    title: 'Preview',
    previewStamp: true,
    timeoutMs: 60_000,
  });
  if (!('pdf' in finished)) throw new Error('a preview is never spooled');
  return finished;
}

/** Each page's text, from one pdftotext run (pages end with a form feed). */
function textByPage(pdf: Buffer): string[] {
  return pdfText(pdf).split('\f').slice(0, pdfPages(pdf));
}

function expectStamped(pdf: Buffer, { dpi, pagesToLook }: { dpi: number; pagesToLook: number[] }): void {
  const pages = textByPage(pdf);
  pages.forEach((text, i) => expect(text, `page ${i + 1} of ${pages.length}`).toContain('PREVIEW'));
  for (const page of pagesToLook) expect(redPixelShare(pdf, page, dpi), `red on page ${page}`).toBeGreaterThan(0.01);
}

/** For each tenth of a page's height, top to bottom: whether some pixels in it are red. */
function redInEachTenth(pdf: Buffer, page: number, dpi: number): boolean[] {
  const { width, height, rgb } = pdfPagePixels(pdf, page, dpi);
  const bands = Array.from({ length: 10 }, () => false);
  for (let i = 0; i + 2 < rgb.length; i += 3) {
    const [r, g, b] = [rgb[i]!, rgb[i + 1]!, rgb[i + 2]!];
    if (r >= 150 && r - g >= 30 && r - b >= 30)
      bands[Math.min(9, Math.floor((Math.floor(i / 3 / width) / height) * 10))] = true;
  }
  return bands;
}

describe('preview stamp', () => {
  const shapes: { name: string; template: RenderTemplate; minPages: number; dpi: number }[] = [
    {
      name: 'A4 landscape',
      template: { html: '<p>one</p><p style="break-before: page">two</p>', page: { orientation: 'landscape' } },
      minPages: 2,
      dpi: 40,
    },
    // Chromium prints such a page 0.96 pt square; the stamp shrinks with it (and scales up with any zoom).
    {
      name: '1 px pages',
      template: { html: '<p>one</p><p>two</p>', css: '@page { size: 1px 1px; margin: 0 }' },
      minPages: 2,
      dpi: 15_000,
    },
    {
      name: 'a thin strip',
      template: { html: '<p>one</p><p>two</p>', css: '@page { size: 2000px 3px; margin: 0 }' },
      minPages: 2,
      dpi: 200,
    },
    {
      name: '200-inch pages',
      template: {
        html: '<p>one</p><p style="break-before: page">two</p>',
        css: '@page { size: 200in 200in; margin: 0 }',
      },
      minPages: 2,
      dpi: 2,
    },
  ];

  it.each(shapes)('stamps every page of $name', async ({ template, minPages, dpi }) => {
    const { pdf } = await preview({ template, data: {} });
    expect(pdfPages(pdf)).toBeGreaterThanOrEqual(minPages);
    expectStamped(pdf, { dpi, pagesToLook: [1, pdfPages(pdf)] });
  });

  it('stamps a long receipt-shaped page all along its length, not only in the middle', async () => {
    const { pdf } = await preview({
      template: { html: '<p>Receipt</p>', css: '@page { size: 3in 200in; margin: 0 }' },
      data: {},
    });
    expect(pdfPages(pdf)).toBe(1);
    expectStamped(pdf, { dpi: 4, pagesToLook: [1] });
    expect(redInEachTenth(pdf, 1, 4)).toEqual(Array.from({ length: 10 }, () => true));
  });

  it('stamps every one of hundreds of pages', async () => {
    const { pdf } = await preview({
      template: { html: '{% for i in range(0, 300) %}<p style="break-after: page">Sheet {{ i + 1 }}</p>{% endfor %}' },
      data: {},
    });
    expect(pdfPages(pdf)).toBeGreaterThanOrEqual(300);
    expectStamped(pdf, { dpi: 20, pagesToLook: [1, 150, 300] });
    expect(textByPage(pdf)[299]).toContain('Sheet 300');
  });

  it('stamps rotated pages across what the reader sees', async () => {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    for (const rotation of [0, 90, 180, 270, -90]) {
      const page = doc.addPage([300, 600]);
      page.setRotation(degrees(rotation));
      page.drawText(`Rotated ${rotation}`, { x: 20, y: 20, size: 12, font });
    }
    const stamped = await stampPreview(Buffer.from(await doc.save()));
    expect(pdfPages(stamped)).toBe(5);
    expectStamped(stamped, { dpi: 40, pagesToLook: [1, 2, 3, 4, 5] });
    expect(textByPage(stamped)[1]).toContain('Rotated 90');
  });

  it('refuses a file it cannot stamp instead of passing it on', async () => {
    const error = await stampPreview(Buffer.from('%PDF-1.7 but nothing else')).catch((e: unknown) => e);
    expect(isAppError(error, 'RENDER_FAILED')).toBe(true);
  });

  it('leaves a paid document alone', async () => {
    const { pdf } = await renderer.render({ template: { html: '<p>Paid for</p>' }, data: {} });
    expect(pdfText(pdf)).not.toContain('PREVIEW');
    expect(redPixelShare(pdf, 1)).toBe(0);
  });
});
