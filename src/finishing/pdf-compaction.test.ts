/**
 * Compaction on real Chromium output: a compacted tagged document keeps its structure tree, links and
 * outline and shows the same text, qpdf finds nothing wrong with it, and it is smaller; the same holds
 * after the steps that run before compaction in the service (the Info update, PDF/A-2b, the preview
 * stamp). A file of a shape compaction does not handle comes back unchanged.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PDFDocument, PDFName } from '@cantoo/pdf-lib';
import { pdfInfo, pdfOutlineTitles, pdfText, pdfXmp } from '../../test/support/documents/pdf-tools.js';
import { testRenderer } from '../../test/support/documents/rendering-kit.js';
import { withDocumentInfo } from './document-info.js';
import { compactPdf, compactPdfFile } from './pdf-compaction.js';
import type { PdfRenderer } from '../rendering/pdf-renderer.js';
import { CompactionPool, type CompactionTask } from './compaction-pool.js';
import { toPdfA } from './pdfa.js';
import { stampPreview } from './preview-stamp.js';

const DOCUMENT = `<html><head><title>Compaction check</title><style>@page { size: A4; margin: 15mm } h2 { break-before: page }</style></head><body>
<h1 id="top">Annual report {{ year }}</h1>
<p>See <a href="https://example.com/terms">the terms</a> and <a href="#part-2">part two</a>.</p>
{% for i in range(1, 4) %}<h2 id="part-{{ i }}">Part {{ i }}</h2>
<table><thead><tr><th>Row</th><th>Amount</th></tr></thead><tbody>
{% for r in range(60) %}<tr><td>Line {{ i }}.{{ r }}</td><td>{{ r * 7 }}.00 EUR</td></tr>{% endfor %}
</tbody></table><p><a href="#top">Back to the top</a></p>{% endfor %}
</body></html>`;

/** What qpdf's JSON says about the document's structure: tags, link annotations (and their targets). */
function structure(pdf: Buffer): { structTreeRoot: boolean; links: number; uris: string[]; markInfo: boolean } {
  const dir = mkdtempSync(join(tmpdir(), 'pressroom-compaction-'));
  try {
    const path = join(dir, 'doc.pdf');
    writeFileSync(path, pdf);
    const json = JSON.parse(
      execFileSync('qpdf', ['--json=2', '--json-key=qpdf', path], { encoding: 'utf8', maxBuffer: 256 << 20 }),
    ) as { qpdf: [unknown, Record<string, { value?: Record<string, unknown> }>] };
    const objects = Object.values(json.qpdf[1])
      .map((o) => o.value)
      .filter((v): v is Record<string, unknown> => typeof v === 'object' && v !== null);
    const catalog = objects.find((v) => v['/Type'] === '/Catalog');
    const links = objects.filter((v) => v['/Subtype'] === '/Link');
    const uris = objects.map((v) => v['/URI']).filter((u): u is string => typeof u === 'string');
    return {
      structTreeRoot: catalog?.['/StructTreeRoot'] !== undefined,
      links: links.length,
      uris,
      markInfo: catalog?.['/MarkInfo'] !== undefined,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function qpdfCheck(pdf: Buffer): string {
  const dir = mkdtempSync(join(tmpdir(), 'pressroom-compaction-'));
  try {
    writeFileSync(join(dir, 'doc.pdf'), pdf);
    return execFileSync('qpdf', ['--check', join(dir, 'doc.pdf')], { encoding: 'utf8', maxBuffer: 64 << 20 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('compaction', () => {
  let renderer: PdfRenderer;
  /** The compaction threads, as the finishing step runs them. */
  const pool = new CompactionPool(2);
  const task = (timeoutMs: number): CompactionTask => ({
    timeoutMs,
    ticket: { accountId: 'compaction-test', kind: 'paid' },
  });
  let tagged: Buffer;
  let untagged: Buffer;

  beforeAll(async () => {
    renderer = testRenderer({ timeoutMs: 180_000 });
    const template = { html: DOCUMENT };
    tagged = await withDocumentInfo((await renderer.render({ template, data: { year: 2026 } })).pdf, 'Report');
    untagged = await withDocumentInfo(
      (await renderer.render({ template, data: { year: 2026 }, tagged: false })).pdf,
      'Report',
    );
  }, 240_000);
  afterAll(async () => {
    await renderer?.close();
    await pool.close();
  });

  it('keeps the tags, links, outline and text of a tagged document, in a smaller file qpdf finds sound', () => {
    const before = structure(tagged);
    expect(before).toMatchObject({ structTreeRoot: true, markInfo: true });
    expect(before.links).toBeGreaterThanOrEqual(5);
    const result = compactPdf(tagged);
    expect(result.compacted).toBe(true);
    const after = result.pdf;
    expect(after.length).toBeLessThan(tagged.length * 0.8);
    expect(qpdfCheck(after)).toContain('No syntax or stream encoding errors');
    expect(structure(after)).toEqual(before);
    expect(pdfOutlineTitles(after)).toEqual(pdfOutlineTitles(tagged));
    expect(pdfOutlineTitles(after)).toEqual(expect.arrayContaining(['Part 1', 'Part 3']));
    expect(pdfText(after)).toBe(pdfText(tagged));
    expect(pdfInfo(after)).toMatchObject({
      Tagged: 'yes',
      Title: 'Compaction check',
      Pages: pdfInfo(tagged).Pages,
      'PDF version': '1.5',
    });
  });

  it('renders untagged without a structure tree or outline, and compacts that too', () => {
    expect(pdfInfo(untagged).Tagged).toBe('no');
    expect(structure(untagged).structTreeRoot).toBe(false);
    expect(pdfOutlineTitles(untagged)).toEqual([]);
    expect(untagged.length).toBeLessThan(tagged.length);
    const result = compactPdf(untagged);
    expect(qpdfCheck(result.pdf)).toContain('No syntax or stream encoding errors');
    expect(pdfText(result.pdf)).toBe(pdfText(untagged));
    expect(structure(result.pdf).uris).toEqual(structure(untagged).uris);
  });

  it('keeps a PDF/A-2b file PDF/A (XMP, OutputIntent) and tagged', async () => {
    const archival = await toPdfA(tagged, 'pdf/a-2b');
    const result = compactPdf(archival);
    expect(result.compacted).toBe(true);
    expect(qpdfCheck(result.pdf)).toContain('No syntax or stream encoding errors');
    expect(pdfXmp(result.pdf)).toMatch(/pdfaid:part(="|>)2/);
    const doc = await PDFDocument.load(result.pdf, { updateMetadata: false });
    expect(doc.catalog.has(PDFName.of('OutputIntents'))).toBe(true);
    expect(pdfInfo(result.pdf).Tagged).toBe('yes');
    expect(pdfText(result.pdf)).toBe(pdfText(archival));
  });

  it('keeps the preview stamp', async () => {
    const stamped = await stampPreview(tagged);
    const result = compactPdf(stamped);
    expect(result.compacted).toBe(true);
    expect(qpdfCheck(result.pdf)).toContain('No syntax or stream encoding errors');
    expect(pdfText(result.pdf)).toBe(pdfText(stamped));
    expect(pdfText(result.pdf)).toContain('PREVIEW');
  });

  it('hands back a file it does not handle unchanged (already object streams), and runs off the event loop on a compaction thread', async () => {
    const once = compactPdf(tagged).pdf;
    const again = compactPdf(once);
    expect(again).toMatchObject({ compacted: false, reason: 'not a classic xref table' });
    expect(again.pdf).toBe(once);
    // What is left of a render deadline is a fraction of a millisecond as often as not.
    const threaded = await pool.compact(tagged, task(60_000.25));
    expect(threaded.compacted).toBe(true);
    expect(threaded.pdf.equals(compactPdf(tagged).pdf)).toBe(true);
  });

  it('compacts from file to file reading at offsets, window by window, into the same bytes as in memory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'pressroom-compaction-'));
    try {
      const input = join(dir, 'in.pdf');
      writeFileSync(input, tagged);
      const inMemory = compactPdf(tagged).pdf;
      // A 1 KB window: most reads refill it, objects straddle windows, fonts and content streams exceed it.
      for (const window of [1024, 64 * 1024, 4 << 20]) {
        const output = join(dir, `out-${window}.pdf`);
        expect(compactPdfFile(input, output, window)).toEqual({
          compacted: true,
          bytesBefore: tagged.length,
          bytesAfter: inMemory.length,
        });
        expect(readFileSync(output).equals(inMemory)).toBe(true);
      }
      // Not compactable (already object streams): no output file is left; an existing output is never overwritten.
      expect(compactPdfFile(join(dir, 'out-1024.pdf'), join(dir, 'again.pdf'), 1024)).toMatchObject({
        compacted: false,
        reason: 'not a classic xref table',
      });
      expect(() => compactPdfFile(input, join(dir, 'out-1024.pdf'))).toThrow(/EEXIST/);
      expect(readdirSync(dir).sort()).toEqual(['in.pdf', 'out-1024.pdf', 'out-4194304.pdf', 'out-65536.pdf']);
      expect(readFileSync(join(dir, 'out-1024.pdf')).equals(inMemory)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('compacts a spooled file into another file on its thread, and hands back the input file when it cannot', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pressroom-compaction-'));
    try {
      const input = { path: join(dir, 'in.pdf'), size: tagged.length };
      writeFileSync(input.path, tagged);
      const result = await pool.compactFile(input, join(dir, 'out.pdf'), task(60_000));
      expect(result).toMatchObject({
        compacted: true,
        file: { path: join(dir, 'out.pdf') },
        bytesBefore: tagged.length,
      });
      const out = readFileSync(join(dir, 'out.pdf'));
      expect(result.file.size).toBe(out.length);
      expect(out.equals(compactPdf(tagged).pdf)).toBe(true);
      expect(readFileSync(input.path).equals(tagged)).toBe(true);

      // Already compacted: not a shape it handles. No time left: not tried. Not a PDF at all: failed. Each gives the input back.
      const once = { path: join(dir, 'out.pdf'), size: out.length };
      expect(await pool.compactFile(once, join(dir, 'again.pdf'), task(60_000))).toMatchObject({
        compacted: false,
        file: once,
        reason: 'not a classic xref table',
      });
      expect(await pool.compactFile(input, join(dir, 'late.pdf'), task(0))).toMatchObject({
        compacted: false,
        file: input,
        reason: 'timeout',
      });
      const missing = { path: join(dir, 'missing.pdf'), size: 10 };
      expect(await pool.compactFile(missing, join(dir, 'never.pdf'), task(60_000))).toMatchObject({
        compacted: false,
        file: missing,
        reason: expect.stringMatching(/^failed: ENOENT/),
      });
      expect(readdirSync(dir).sort()).toEqual(['in.pdf', 'out.pdf']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
