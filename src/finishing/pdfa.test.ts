/**
 * PDF/A conversion against real tools: Chromium renders the inputs, and qpdf, poppler (pdfinfo,
 * pdffonts, pdftotext) and pdf-lib inspect the outputs. No veraPDF on Debian, so these check the
 * properties listed in each test, not conformance as a whole.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inflateSync } from 'node:zlib';
import {
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFName,
  PDFNumber,
  PDFRawStream,
  PDFStream,
  StandardFonts,
} from '@cantoo/pdf-lib';
import puppeteer, { type Browser } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAppError } from '../shared/errors.js';
import { isPdfAVariant, toPdfA, type PdfAVariant } from './pdfa.js';

const run = promisify(execFile);
const workDir = mkdtempSync(join(tmpdir(), 'pdfa-test-'));
const ICC = readFileSync(new URL('./assets/srgb.icc', import.meta.url));

/** Invoice-like page; `transparent` adds what makes Chromium write transparency (opacity, RGBA, emoji). */
function invoiceHtml(transparent: boolean): string {
  const fx = transparent
    ? `<p style="opacity:.4;color:#c00">Semi-transparent note</p>
       <svg width="120" height="40"><rect x="2" y="2" width="116" height="36" rx="6" fill="#228be6" fill-opacity="0.6"/></svg>
       <p>Emoji 🎉</p>`
    : `<svg width="120" height="40"><rect x="2" y="2" width="116" height="36" rx="6" fill="#228be6"/></svg>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Invoice INV-42</title><style>
    @page { size: A4; margin: 12mm } body { font-family: "Liberation Sans", sans-serif }
    .band { height: 18mm; background: linear-gradient(90deg, #0b7285, #e64980) } td, th { border: 1px solid #999; padding: 2mm }
    </style></head><body><div class="band"></div><h1>Invoice INV-42</h1>${fx}
    <table><thead><tr><th>Item</th><th>Qty</th><th>Price</th></tr></thead>
    <tbody><tr><td>Widget</td><td>2</td><td>10.00</td></tr><tr><td>Gadget</td><td>1</td><td>25.50</td></tr></tbody></table>
    <p lang="ja">日本語のテキスト</p><p><a href="https://example.com/pay">Pay online</a></p>
    <h2 style="break-before: page">Terms</h2><p>Total due 45.50</p></body></html>`;
}

let browser: Browser;
let profileDir: string;
const inputs: Record<'transparent' | 'opaque' | 'headerFooter', Buffer> = {
  transparent: Buffer.alloc(0),
  opaque: Buffer.alloc(0),
  headerFooter: Buffer.alloc(0),
};

beforeAll(async () => {
  profileDir = mkdtempSync(join(tmpdir(), 'pdfa-test-chromium-'));
  browser = await puppeteer.launch({
    executablePath: '/usr/bin/chromium',
    userDataDir: profileDir,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--headless=new'],
  });
  const page = await browser.newPage();
  for (const kind of ['transparent', 'opaque'] as const) {
    await page.setContent(invoiceHtml(kind === 'transparent'), { waitUntil: 'load' });
    inputs[kind] = Buffer.from(
      await page.pdf({ printBackground: true, preferCSSPageSize: true, tagged: true, outline: true }),
    );
  }
  // The renderer also prints header/footer templates; Chromium draws them outside the page's own content.
  inputs.headerFooter = Buffer.from(
    await page.pdf({
      printBackground: true,
      preferCSSPageSize: true,
      tagged: true,
      outline: true,
      displayHeaderFooter: true,
      headerTemplate: '<div style="font-size:8px;width:100%;text-align:center;color:rgba(200,0,0,.3)">DRAFT</div>',
      footerTemplate:
        '<div style="font-size:8px;width:100%;text-align:right">Page <span class="pageNumber"></span>/<span class="totalPages"></span></div>',
    }),
  );
});

afterAll(async () => {
  await browser?.close();
  rmSync(profileDir, { recursive: true, force: true });
  rmSync(workDir, { recursive: true, force: true });
});

let fileCount = 0;
async function inspect(pdf: Buffer) {
  const file = join(workDir, `out-${fileCount++}.pdf`);
  writeFileSync(file, pdf);
  const tool = async (cmd: string, args: string[], after: string[] = []) =>
    (await run(cmd, [...args, file, ...after], { maxBuffer: 32 << 20 })).stdout;
  const fonts = (await tool('pdffonts', []))
    .split('\n')
    .slice(2)
    .filter(Boolean)
    .map((line) => {
      const cols = line.trim().split(/\s+/); // … type encoding emb sub uni objID gen
      return { line, emb: cols[cols.length - 5] };
    });
  return {
    file,
    qpdfCheck: await tool('qpdf', ['--check']), // rejects on exit 2 (errors) and 3 (warnings)
    info: await tool('pdfinfo', ['-isodates']),
    xmp: await tool('pdfinfo', ['-meta']),
    fonts,
    text: await tool('pdftotext', ['-enc', 'UTF-8'], ['-']).then((t) => t.replace(/\s+/g, ' ')),
    doc: await PDFDocument.load(pdf, { updateMetadata: false }),
  };
}

async function saved(pdf: Buffer): Promise<string> {
  const file = join(workDir, `in-${fileCount++}.pdf`);
  writeFileSync(file, pdf);
  return file;
}

/** Every page as a small PPM's sha256, to compare what two files look like pixel for pixel. */
async function pageRaster(file: string): Promise<string[]> {
  const prefix = join(workDir, `raster-${fileCount++}`);
  await run('pdftoppm', ['-r', '30', file, prefix]);
  return readdirSync(workDir)
    .filter((f) => f.startsWith(`${prefix.split('/').pop()}-`))
    .sort()
    .map((f) =>
      createHash('sha256')
        .update(readFileSync(join(workDir, f)))
        .digest('hex'),
    );
}

const field = (text: string, key: string) => new RegExp(`^${key}:\\s+(.*)$`, 'm').exec(text)?.[1]?.trim();
const xmpValue = (xmp: string, tag: string) =>
  new RegExp(`<${tag}>(?:<rdf:\\w+><rdf:li[^>]*>)?([^<]*)<`).exec(xmp)?.[1];

/** Every transparency construct PDF/A-1 forbids (ISO 19005-1, 6.4), found in any object. */
function transparencyIn(doc: PDFDocument): string[] {
  const found: string[] = [];
  for (const [ref, object] of doc.context.enumerateIndirectObjects()) {
    const dict = object instanceof PDFRawStream ? object.dict : object instanceof PDFDict ? object : undefined;
    if (!dict) continue;
    const smask = dict.get(PDFName.of('SMask'));
    if (smask && smask !== PDFName.of('None')) found.push(`${ref} SMask`);
    for (const key of ['CA', 'ca']) {
      const alpha = dict.lookupMaybe(PDFName.of(key), PDFNumber)?.asNumber();
      if (alpha !== undefined && alpha < 1) found.push(`${ref} ${key} ${alpha}`);
    }
    if (dict.lookupMaybe(PDFName.of('Group'), PDFDict)?.get(PDFName.of('S')) === PDFName.of('Transparency'))
      found.push(`${ref} group`);
  }
  return found;
}

describe('Chromium input (what completion starts from)', () => {
  it.each(['transparent', 'opaque'] as const)(
    '%s: tagged, outlined, fonts embedded, but no OutputIntent, XMP or trailer ID',
    async (kind) => {
      const doc = await PDFDocument.load(inputs[kind], { updateMetadata: false });
      expect(transparencyIn(doc).length > 0).toBe(kind === 'transparent');
      expect(doc.catalog.has(PDFName.of('StructTreeRoot'))).toBe(true);
      expect(doc.catalog.has(PDFName.of('Outlines'))).toBe(true);
      for (const key of ['OutputIntents', 'Metadata']) expect(doc.catalog.has(PDFName.of(key))).toBe(false);
      expect(doc.context.trailerInfo.ID).toBeUndefined();
      expect((await inspect(inputs[kind])).fonts.every((f) => f.emb === 'yes')).toBe(true);
    },
  );
});

describe('isPdfAVariant', () => {
  it.each([
    ['pdf/a-1b', true],
    ['pdf/a-2b', true],
    ['pdf/a-3b', true],
    ['pdf/a-2a', false],
    ['PDF/A-2B', false],
    ['', false],
    [2, false],
    [undefined, false],
  ])('%s → %s', (value, expected) => expect(isPdfAVariant(value)).toBe(expected));
});

describe.each([
  { variant: 'pdf/a-1b' as PdfAVariant, part: '1', keepsTags: false },
  { variant: 'pdf/a-2b' as PdfAVariant, part: '2', keepsTags: true },
  { variant: 'pdf/a-3b' as PdfAVariant, part: '3', keepsTags: true },
])('toPdfA $variant', ({ variant, part, keepsTags }) => {
  // PDF/A-1 forbids transparency, so Ghostscript paints such pages as one image: the text is gone.
  const kinds = variant === 'pdf/a-1b' ? (['opaque'] as const) : (['transparent', 'opaque'] as const);

  it.each(kinds)('makes the %s invoice an archival file with the same pages and text', async (kind) => {
    const createdAt = new Date('2024-06-30T08:15:00Z');
    const out = await toPdfA(inputs[kind], variant, {
      title: 'Invoice INV-42 · Zoë & Co <test> 🎉',
      author: '山田 太郎',
      creationDate: createdAt,
    });
    const r = await inspect(out);

    expect(r.qpdfCheck).toMatch(/No syntax or stream encoding errors/);
    expect(field(r.info, 'Encrypted')).toBe('no');
    expect(r.doc.context.trailerInfo.Encrypt).toBeUndefined();
    expect(field(r.info, 'Pages')).toBe('2');
    expect(field(r.info, 'PDF version')).toBe(part === '1' ? '1.4' : '1.7');
    // The binary comment right after the header: at least four bytes above 127.
    const comment = out.subarray(out.indexOf(0x0a) + 1, out.indexOf(0x0a) + 6);
    expect(comment[0]).toBe(0x25);
    expect([...comment.subarray(1)].every((b) => b > 127)).toBe(true);

    expect(r.xmp).toMatch(/^<\?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"\?>/);
    expect(xmpValue(r.xmp, 'pdfaid:part')).toBe(part);
    expect(xmpValue(r.xmp, 'pdfaid:conformance')).toBe('B');
    // Info and XMP agree, as PDF/A requires of every Info entry present.
    expect(field(r.info, 'Title')).toBe('Invoice INV-42 · Zoë & Co <test> 🎉');
    expect(xmpValue(r.xmp, 'dc:title')).toBe('Invoice INV-42 · Zoë &#38; Co &#60;test&#62; 🎉');
    expect(field(r.info, 'Author')).toBe('山田 太郎');
    expect(xmpValue(r.xmp, 'dc:creator')).toBe('山田 太郎');
    expect(field(r.info, 'Producer')).toBe(xmpValue(r.xmp, 'pdf:Producer'));
    expect(field(r.info, 'CreationDate')).toBe('2024-06-30T08:15:00Z');
    expect(xmpValue(r.xmp, 'xmp:CreateDate')).toBe('2024-06-30T08:15:00Z');
    expect(new Date(field(r.info, 'ModDate') ?? '').getTime()).toBe(
      new Date(xmpValue(r.xmp, 'xmp:ModifyDate') ?? '').getTime(),
    );
    const creator = field(r.info, 'Creator');
    if (creator) expect(xmpValue(r.xmp, 'xmp:CreatorTool')).toBe(creator);

    const { catalog, context } = r.doc;
    const metadata = catalog.lookup(PDFName.of('Metadata'), PDFStream);
    expect(metadata.dict.has(PDFName.of('Filter'))).toBe(false);
    const id = context.lookup(context.trailerInfo.ID, PDFArray);
    expect(id.size()).toBe(2);

    const intents = catalog.lookup(PDFName.of('OutputIntents'), PDFArray);
    expect(intents.size()).toBe(1);
    const intent = intents.lookup(0, PDFDict);
    expect(intent.get(PDFName.of('S'))).toBe(PDFName.of('GTS_PDFA1'));
    const profile = intent.lookup(PDFName.of('DestOutputProfile'), PDFStream);
    expect(profile.dict.lookup(PDFName.of('N'), PDFNumber).asNumber()).toBe(3);
    expect(profile).toBeInstanceOf(PDFRawStream);
    expect(Buffer.from(inflateSync((profile as PDFRawStream).contents)).equals(ICC)).toBe(true);

    expect(r.fonts.length).toBeGreaterThan(0);
    expect(r.fonts.filter((f) => f.emb !== 'yes').map((f) => f.line)).toEqual([]);
    expect(r.text).toContain('Invoice INV-42');
    expect(r.text).toContain('Total due 45.50');
    // NFKC: Ghostscript (1b) rewrites the ToUnicode of the Type3 CJK font and maps 日 to U+2F47 (KANGXI
    // RADICAL SUN), which looks the same but searches differently; completion (2b/3b) keeps U+65E5.
    expect(part === '1' ? r.text.normalize('NFKC') : r.text).toContain('日本語のテキスト');
    expect(r.doc.catalog.lookupMaybe(PDFName.of('Names'), PDFDict)?.has(PDFName.of('JavaScript')) ?? false).toBe(false);

    for (const page of r.doc.getPages()) {
      const annots = page.node.lookupMaybe(PDFName.of('Annots'), PDFArray);
      for (let i = 0; annots && i < annots.size(); i++) {
        const flags = annots.lookup(i, PDFDict).lookupMaybe(PDFName.of('F'), PDFNumber)?.asNumber() ?? 0;
        expect(flags & 4, 'annotation Print flag').toBe(4);
        expect(flags & (1 | 2 | 32 | 256), 'annotation hiding flags').toBe(0);
      }
    }

    if (keepsTags) {
      // Completion leaves every page's content alone, so the pages look exactly as Chromium drew them.
      const [before, after] = await Promise.all([saved(inputs[kind]).then(pageRaster), pageRaster(r.file)]);
      expect(before).toHaveLength(2);
      expect(after).toEqual(before);
      expect(field(r.info, 'Tagged')).toBe('yes');
      expect(catalog.has(PDFName.of('StructTreeRoot'))).toBe(true);
      expect(String(catalog.lookup(PDFName.of('MarkInfo'), PDFDict).get(PDFName.of('Marked')))).toBe('true');
      expect(catalog.has(PDFName.of('Outlines'))).toBe(true);
      expect(String(catalog.lookup(PDFName.of('Lang')))).toBe('(en)');
    } else {
      // PDF/A-1 rules Ghostscript must have met: no transparency, no object or xref streams (PDF 1.5),
      // and a CIDSet in every subset CID font.
      expect(transparencyIn(r.doc)).toEqual([]);
      expect(out.includes('/ObjStm') || out.includes('/XRef')).toBe(false);
      const cidFonts = r.doc.context
        .enumerateIndirectObjects()
        .map(([, o]) => o)
        .filter(
          (o): o is PDFDict => o instanceof PDFDict && o.get(PDFName.of('Subtype')) === PDFName.of('CIDFontType2'),
        );
      expect(cidFonts.length).toBeGreaterThan(0);
      for (const font of cidFonts)
        expect(font.lookup(PDFName.of('FontDescriptor'), PDFDict).has(PDFName.of('CIDSet'))).toBe(true);
    }
  });
});

describe('toPdfA edge cases', () => {
  it('flattens PDF/A-1b pages with transparency into one image each (their text is lost)', async () => {
    const r = await inspect(await toPdfA(inputs.transparent, 'pdf/a-1b'));
    expect(r.qpdfCheck).toMatch(/No syntax or stream encoding errors/);
    expect(xmpValue(r.xmp, 'pdfaid:part')).toBe('1');
    expect(transparencyIn(r.doc)).toEqual([]);
    expect(r.text).not.toContain('Invoice INV-42');
    // The page without transparency stays vector, so its text survives.
    expect(r.text).toContain('Total due 45.50');
    expect(field(r.info, 'Title')).toBe('Invoice INV-42');
  });

  it.each(['pdf/a-2b', 'pdf/a-3b'] as const)(
    'completes a page with header and footer templates (%s), tags kept',
    async (variant) => {
      const r = await inspect(await toPdfA(inputs.headerFooter, variant));
      expect(r.qpdfCheck).toMatch(/No syntax or stream encoding errors/);
      expect(field(r.info, 'Tagged')).toBe('yes');
      expect(r.fonts.filter((f) => f.emb !== 'yes')).toEqual([]);
      expect(r.text).toMatch(/DRAFT.*Invoice INV-42.*Page 1\/2/);
      expect(r.text).toContain('Page 2/2');
    },
  );

  it('falls back to Ghostscript for 2b when a font is not embedded, and embeds one', async () => {
    const doc = await PDFDocument.create();
    doc.addPage().drawText('Standard Helvetica, not embedded', {
      font: await doc.embedFont(StandardFonts.Helvetica),
      x: 50,
      y: 700,
    });
    const before = await inspect(Buffer.from(await doc.save()));
    expect(before.fonts.map((f) => f.emb)).toEqual(['no']);
    const r = await inspect(await toPdfA(Buffer.from(await doc.save()), 'pdf/a-2b'));
    expect(r.fonts.length).toBeGreaterThan(0);
    expect(r.fonts.filter((f) => f.emb !== 'yes')).toEqual([]);
    expect(xmpValue(r.xmp, 'pdfaid:part')).toBe('2');
    expect(r.text).toContain('Standard Helvetica, not embedded');
  });

  it('refuses an encrypted PDF with PDFA_CONVERSION_FAILED', async () => {
    const plain = join(workDir, 'plain.pdf');
    const locked = join(workDir, 'locked.pdf');
    writeFileSync(plain, inputs.opaque);
    await run('qpdf', ['--encrypt', 'user', 'owner', '256', '--', plain, locked]);
    const error = await toPdfA(readFileSync(locked), 'pdf/a-2b').catch((e: unknown) => e);
    expect(isAppError(error, 'PDFA_CONVERSION_FAILED')).toBe(true);
    expect((error as Error).message).toMatch(/encrypted/);
  });

  it.each(['pdf/a-1b', 'pdf/a-2b'] as const)('refuses bytes that are not a PDF (%s)', async (variant) => {
    const error = await toPdfA(Buffer.from('<html>not a pdf</html>'), variant).catch((e: unknown) => e);
    expect(isAppError(error, 'PDFA_CONVERSION_FAILED')).toBe(true);
  });

  it('says when Ghostscript, or prlimit that starts it under its ceilings, is missing', async () => {
    const path = process.env.PATH;
    // A PATH with prlimit and nothing else, then one with nothing at all.
    const onlyPrlimit = mkdtempSync(join(tmpdir(), 'pdfa-test-path-'));
    symlinkSync((await run('sh', ['-c', 'command -v prlimit'])).stdout.trim(), join(onlyPrlimit, 'prlimit'));
    try {
      for (const [dir, missing] of [
        [onlyPrlimit, /"gs" was not found on PATH; install Debian's ghostscript package/],
        ['/nonexistent', /"prlimit" was not found on PATH; install Debian's util-linux package/],
      ] as const) {
        process.env.PATH = dir;
        const error = await toPdfA(inputs.opaque, 'pdf/a-1b').catch((e: unknown) => e);
        expect(isAppError(error, 'PDFA_CONVERSION_FAILED')).toBe(true);
        expect((error as Error).message).toMatch(missing);
      }
    } finally {
      process.env.PATH = path;
      rmSync(onlyPrlimit, { recursive: true, force: true });
    }
  });

  it('runs Ghostscript conversions side by side and leaves no temp dir behind', async () => {
    const ours = () => new Set(readdirSync(tmpdir()).filter((d) => d.startsWith('pressroom-pdfa-')));
    const before = ours();
    const outs = await Promise.all([1, 2, 3].map(() => toPdfA(inputs.opaque, 'pdf/a-1b')));
    for (const out of outs) expect(out.subarray(0, 8).toString()).toBe('%PDF-1.4');
    // Another test file may be converting at the same moment: wait for dirs that are not ours to go too.
    const leftovers = () => [...ours()].filter((d) => !before.has(d));
    for (let waitedMs = 0; leftovers().length > 0 && waitedMs < 30_000; waitedMs += 200)
      await new Promise((r) => setTimeout(r, 200));
    expect(leftovers()).toEqual([]);
  });
});
