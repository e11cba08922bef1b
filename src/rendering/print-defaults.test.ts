/**
 * Print-friendly defaults (issue 13), printed by real Chromium and read back with poppler:
 * table rows stay whole across page breaks unless the template says otherwise, header and footer
 * text is readable without a `font-size`, and every named paper size prints at its size.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfInfo, pdfPages, pdfText, pdfWordBoxes } from '../../test/support/documents/pdf-tools.js';
import { startTestRenderer } from '../../test/support/documents/rendering-kit.js';
import { PAPER_FORMAT_NAMES, PAPER_FORMATS } from './page-size.js';
import type { PdfRenderer } from './pdf-renderer.js';

let renderer: PdfRenderer;
beforeAll(async () => {
  renderer = await startTestRenderer({ concurrency: 1 });
});
afterAll(async () => renderer?.close());

/**
 * 30 rows of uneven height (1 to 7 lines of 30 px text): on A4 some row must straddle a page
 * boundary. Each row's first cell starts with `R<n>-TOP` and ends with `R<n>-END`.
 */
const TABLE = `<table><thead><tr><th>HEADING</th><th>Other</th></tr></thead><tbody>${Array.from(
  { length: 30 },
  (_, n) => `<tr><td>R${n}-TOP${'<br>filler'.repeat(n % 7)}<br>R${n}-END</td><td>right ${n}</td></tr>`,
).join('')}</tbody></table>`;
const TABLE_CSS = 'td, th { font-size: 30px; }';

/** For each page, the row markers printed on it. */
function markersByPage(pdf: Buffer): string[][] {
  return Array.from({ length: pdfPages(pdf) }, (_, i) => pdfText(pdf, { page: i + 1 }).match(/R\d+-(TOP|END)/g) ?? []);
}

/** Rows whose top and end marker landed on different pages. */
function splitRows(pdf: Buffer): number[] {
  const pageOf = new Map<string, number>();
  markersByPage(pdf).forEach((markers, page) => markers.forEach((m) => pageOf.set(m, page)));
  return Array.from({ length: 30 }, (_, n) => n).filter((n) => pageOf.get(`R${n}-TOP`) !== pageOf.get(`R${n}-END`));
}

describe('print-friendly defaults', { timeout: 120_000 }, () => {
  it('keeps every table row on one page, repeats the header row, and lets a template split rows again', async () => {
    const { pdf } = await renderer.render({ template: { html: TABLE, css: TABLE_CSS }, data: {} });
    expect(pdfPages(pdf)).toBeGreaterThan(2);
    expect(splitRows(pdf)).toEqual([]);
    for (let page = 1; page <= pdfPages(pdf); page++) expect(pdfText(pdf, { page })).toContain('HEADING');

    // The template overrides the default, and then rows do straddle pages: the fixture can fail.
    const { pdf: split } = await renderer.render({
      template: { html: TABLE, css: `${TABLE_CSS} tr { break-inside: auto; }` },
      data: {},
    });
    expect(splitRows(split).length).toBeGreaterThan(0);
  });

  it('prints header and footer text readably without a font-size, and the template still sets its own', async () => {
    const heightOf = async (header: string, word: string) => {
      const { pdf } = await renderer.render({
        template: { html: '<p>Body</p>', page: { header_html: header, footer_html: `<div>${word}-FOOT</div>` } },
        data: {},
      });
      const box = (w: string) => pdfWordBoxes(pdf).find((b) => b.word === w);
      const head = box(word);
      const foot = box(`${word}-FOOT`);
      expect(head, `${word} in the header`).toBeDefined();
      expect(foot, `${word}-FOOT in the footer`).toBeDefined();
      return { header: head!.yMax - head!.yMin, footer: foot!.yMax - foot!.yMin };
    };
    // Chromium's own default is about 1 pt high; 10px text is about 10 pt from top to bottom of its box.
    const plain = await heightOf('<div>PLAIN</div>', 'PLAIN');
    expect(plain.header).toBeGreaterThan(7);
    expect(plain.footer).toBeGreaterThan(7);
    const own = await heightOf('<div style="font-size: 20px">OWN</div>', 'OWN');
    expect(own.header).toBeGreaterThan(plain.header * 1.6);
    const styled = await heightOf('<style>div { font-size: 6px }</style><div>SMALL</div>', 'SMALL');
    expect(styled.header).toBeLessThan(plain.header * 0.8);
  });

  it('prints each named paper size at its size, and a custom width and height', async () => {
    for (const format of PAPER_FORMAT_NAMES) {
      const { pdf } = await renderer.render({ template: { html: `<p>${format}</p>`, page: { format } }, data: {} });
      expectPoints(pdf, [PAPER_FORMATS[format].width * 72, PAPER_FORMATS[format].height * 72], format);
    }
    const { pdf } = await renderer.render({
      template: { html: '<p>label</p>', page: { width: '100mm', height: '150mm' } },
      data: {},
    });
    expectPoints(pdf, [(100 / 25.4) * 72, (150 / 25.4) * 72], '100mm x 150mm');
    const { pdf: landscape } = await renderer.render({
      template: { html: '<p>label</p>', page: { width: '4in', height: '6in', orientation: 'landscape' } },
      data: {},
    });
    expectPoints(landscape, [432, 288], '4in x 6in landscape');
  });

  it('refuses a paper size it cannot print before rendering', async () => {
    for (const page of [
      { width: '100mm' },
      { width: '100mm', height: '0' },
      { format: 'A4' as const, width: '1in', height: '1in' },
    ]) {
      await expect(
        renderer.render({ template: { html: 'x', page }, data: {} }),
        JSON.stringify(page),
      ).rejects.toMatchObject({ code: 'INVALID_REQUEST' });
    }
  });
});

/**
 * pdfinfo's "Page size: 595.28 x 841.89 pts (A4)" of page 1 is `expected` (points) within 1.5 pt:
 * Chromium rounds the paper to its own units (A0's 33.1 in prints as 2383.92 pt, not 2383.2), and
 * the nearest two sizes offered differ by far more.
 */
function expectPoints(pdf: Buffer, expected: number[], label: string): void {
  const match = /^([\d.]+) x ([\d.]+) pts/.exec(pdfInfo(pdf)['Page size'] ?? '');
  const actual = match ? [Number(match[1]), Number(match[2])] : [];
  expect(actual.length, label).toBe(2);
  actual.forEach((points, i) =>
    expect(
      Math.abs(points - expected[i]!),
      `${label}: ${actual.join(' x ')} pt, expected ${expected.map((v) => v.toFixed(1)).join(' x ')}`,
    ).toBeLessThan(1.5),
  );
}
