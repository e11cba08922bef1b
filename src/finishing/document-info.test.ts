/**
 * The Info dictionary rewrite, read back by poppler (pdfinfo) and checked by qpdf, on both routes: the
 * incremental update (a classic xref table, as Chromium writes) and the whole-file rewrite (an xref
 * stream). Chromium's own output goes through it in test/e2e/documents/pdf-metadata.test.ts.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDict, PDFDocument, PDFName, PDFString } from '@cantoo/pdf-lib';
import { describe, expect, it } from 'vitest';
import { pdfInfo, pdfText } from '../../test/support/documents/pdf-tools.js';
import { VERSION } from '../version.js';
import { documentTitle, readInfoTitle, withDocumentInfo, withDocumentInfoInFile } from './document-info.js';

/** A one-page PDF with the given Info entries, as a classic xref table or an xref stream. */
async function makePdf(
  info: { title?: string; creator?: string; rawTitle?: string },
  xref: 'table' | 'stream',
): Promise<Buffer> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const page = doc.addPage([200, 200]);
  page.drawText('Hello invoice', { x: 20, y: 100, size: 12 });
  if (info.title !== undefined) doc.setTitle(info.title);
  if (info.creator !== undefined) doc.setCreator(info.creator);
  doc.setProducer('Skia/PDF m156');
  // A literal string written as is (setTitle writes hex), to try the scan for the dictionary's end.
  if (info.rawTitle !== undefined)
    doc.context.lookup(doc.context.trailerInfo.Info, PDFDict).set(PDFName.of('Title'), PDFString.of(info.rawTitle));
  doc.setCreationDate(new Date('2024-06-01T10:00:00Z'));
  return Buffer.from(await doc.save({ useObjectStreams: xref === 'stream' }));
}

function qpdfCheck(pdf: Buffer): void {
  // Throws (exit 2 or 3) on errors or warnings.
  execFileSync('bash', ['-c', 'f=$(mktemp) && cat > "$f" && qpdf --check "$f"; rc=$?; rm -f "$f"; exit $rc'], {
    input: pdf,
  });
}

const UA = 'Mozilla/5.0 (X11; Linux x86_64) HeadlessChrome/156.0.0.0 Safari/537.36';

describe('withDocumentInfo', () => {
  describe.each(['table', 'stream'] as const)('on a PDF with an xref %s', (xref) => {
    it('names the template when Chromium made the title up, and Pressroom as Creator and Producer', async () => {
      const input = await makePdf({ title: 'render.pressroom.invalid', creator: UA }, xref);
      const out = await withDocumentInfo(input, 'Monthly invoice');
      qpdfCheck(out);
      const info = pdfInfo(out);
      expect(info).toMatchObject({
        Title: 'Monthly invoice',
        Creator: `Pressroom ${VERSION}`,
        Producer: `Pressroom ${VERSION}`,
      });
      expect(info.CreationDate).toMatch(/2024/);
      expect(pdfText(out)).toContain('Hello invoice');
      // The superseded dictionary is gone from the bytes, not only from what readers show.
      expect(out.includes('HeadlessChrome')).toBe(false);
      expect(out.includes('Skia/PDF')).toBe(false);
      // A table gets the cheap incremental update (Chromium's bytes kept, one more xref section); a stream is rewritten.
      const sections = out.toString('latin1').split('startxref').length - 1;
      expect(sections).toBe(xref === 'table' ? 2 : 1);
    });

    it('gives a PDF in a file the same update, in the file itself (a spilled PDF)', async () => {
      const input = await makePdf({ title: 'render.pressroom.invalid', creator: UA }, xref);
      const expected = await withDocumentInfo(input, 'Monthly invoice');
      const dir = mkdtempSync(join(tmpdir(), 'pressroom-info-'));
      try {
        const path = join(dir, 'spilled.pdf');
        writeFileSync(path, input);
        const file = await withDocumentInfoInFile({ path, size: input.length }, 'Monthly invoice');
        expect(file).toEqual({ path, size: expected.length });
        expect(readFileSync(path).equals(expected)).toBe(true);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it("keeps the document's own title", async () => {
      const out = await withDocumentInfo(
        await makePdf({ title: 'Invoice 42 – Zoë (draft) \\ ok', creator: UA }, xref),
        'Monthly invoice',
      );
      qpdfCheck(out);
      expect(pdfInfo(out).Title).toBe('Invoice 42 – Zoë (draft) \\ ok');
    });
  });

  it('fails with STORAGE_ERROR, naming the spool, when a spilled file is gone', async () => {
    const gone = withDocumentInfoInFile(
      { path: join(tmpdir(), 'pressroom-no-such-dir', 'spilled.pdf'), size: 100 },
      'Monthly invoice',
    );
    await expect(gone).rejects.toMatchObject({
      code: 'STORAGE_ERROR',
      message: expect.stringContaining('spool directory: ENOENT'),
    });
  });

  it('finds the end of an old dictionary whose strings hold ">>", "endobj" and nested parentheses', async () => {
    const input = await makePdf({ rawTitle: 'a >> b endobj \\(c (d) e\\) %f', creator: UA }, 'table');
    const out = await withDocumentInfo(input, 'Fallback');
    qpdfCheck(out);
    expect(pdfInfo(out)).toMatchObject({ Title: 'a >> b endobj (c (d) e) %f', Creator: `Pressroom ${VERSION}` });
    // pdf-lib (which PDF/A completion uses) reads the update too.
    const reread = await PDFDocument.load(out, { updateMetadata: false });
    expect(reread.getTitle()).toBe('a >> b endobj (c (d) e) %f');
    expect(reread.getProducer()).toBe(`Pressroom ${VERSION}`);
  });

  it.each(['table', 'stream'] as const)('reads back the title it wrote (xref %s)', async (xref) => {
    const out = await withDocumentInfo(await makePdf({ creator: UA }, xref), 'Rechnung für Zoë');
    expect(await readInfoTitle(out)).toBe('Rechnung für Zoë');
  });

  it('adds a title when the PDF has none', async () => {
    const out = await withDocumentInfo(await makePdf({}, 'table'), 'Receipt');
    qpdfCheck(out);
    expect(pdfInfo(out)).toMatchObject({ Title: 'Receipt', Producer: `Pressroom ${VERSION}` });
  });
});

describe('documentTitle', () => {
  it.each([
    ['render.pressroom.invalid', 'T'],
    ['https://render.pressroom.invalid/', 'T'],
    ['   ', 'T'],
    [undefined, 'T'],
    ['Invoice 7', 'Invoice 7'],
  ])('%j → %j', (chromiumTitle, expected) => {
    expect(documentTitle(chromiumTitle, 'T')).toBe(expected);
  });
});
