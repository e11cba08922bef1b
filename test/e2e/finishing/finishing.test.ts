/**
 * Finishing (docs/finishing.md) over real HTTP on SQLite, checked with independent tools: qpdf's
 * --show-encryption and --decrypt for protect and unlock, pdftotext for watermarks (a Cyrillic one,
 * on the pages named only) and flattened form values, pdfinfo for page counts and metadata, unzip for
 * split's zip. One Chromium render for create with watermark + metadata + protect, one for the same
 * through create-async (its job row must not hold the passwords); the other inputs are made with pdf-lib.
 * Every refusal is a 422 that leaves the balance as it was.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument, StandardFonts } from '@cantoo/pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfInfo, pdfPageText, pdfPages, pdfText, pdfTool } from '../../support/documents/pdf-tools.js';
import { solidPng } from '../../support/documents/png-images.js';
import { checkPdfA } from '../../../src/finishing/pdfa-check.js';
import { completedJobPdf, createTemplates, startTestApp, until, type TestApp } from '../../support/test-app.js';

/** A PDF whose page i reads `<name> page i`. */
async function makePdf(name: string, pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i += 1)
    doc.addPage([400, 500]).drawText(`${name} page ${i}`, { x: 30, y: 400, size: 18, font });
  return Buffer.from(await doc.save());
}

/** A one-page form: a text field holding a value, and a checked box. */
async function makeForm(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([400, 500]);
  const form = doc.getForm();
  const name = form.createTextField('customer.name');
  name.setText('Ada Lovelace');
  name.addToPage(page, { x: 30, y: 400, width: 300, height: 30 });
  const agree = form.createCheckBox('agree');
  agree.addToPage(page, { x: 30, y: 340, width: 20, height: 20 });
  agree.check();
  return Buffer.from(await doc.save());
}

/** Runs `qpdf args… in.pdf [out.pdf]` on the bytes; returns stdout, or the output file with `output`. */
function qpdf(pdf: Buffer, args: string[], output = false): string | Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'finishing-test-'));
  try {
    writeFileSync(join(dir, 'in.pdf'), pdf);
    const out = execFileSync('qpdf', [...args, join(dir, 'in.pdf'), ...(output ? [join(dir, 'out.pdf')] : [])], {
      encoding: 'utf8',
    });
    return output ? readFileSync(join(dir, 'out.pdf')) : out;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `unzip -l` names of a zip. */
function zipNames(zip: Buffer): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'finishing-zip-'));
  try {
    writeFileSync(join(dir, 'parts.zip'), zip);
    const listing = execFileSync('unzip', ['-Z1', join(dir, 'parts.zip')], { encoding: 'utf8' });
    return listing.split('\n').filter(Boolean);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Text as pdftotext reads it, whitespace folded (a rotated mark may come out with its own spacing). */
const flat = (text: string) => text.replace(/\s+/g, ' ').trim();
const b64 = (pdf: Buffer) => pdf.toString('base64');
const WATERMARK = 'Черновик DRAFT';

let t: TestApp;
let user: { accountId: string; apiKey: string };
let three: Buffer;
let five: Buffer;

const tool = (name: string, body: unknown) => t.request('POST', `/v1/pdf-tools/${name}`, { apiKey: user.apiKey, body });
const balance = async () => (await t.request('GET', '/v1/account', { apiKey: user.apiKey })).body.credits as number;
const settled = () =>
  until(async () => (await t.services.charges.pendingCount(user.accountId)) === 0, 30_000, 'charges settled');
const download = async (url: string) => {
  const link = new URL(url);
  return (await t.request('GET', `${link.pathname}${link.search}`)).bytes;
};

beforeAll(async () => {
  t = await startTestApp('sqlite', { PRESSROOM_JOB_POLL_MS: '100' });
  t.services.startWorkers();
  user = await t.createAccount({ credits: 100, plan: 'enterprise' });
  [three, five] = await Promise.all([makePdf('Three', 3), makePdf('Five', 5)]);
});
afterAll(async () => {
  await t?.close();
});

describe('PDF tools: protect, unlock, watermark, split, flatten, metadata', () => {
  it('protects with AES-256 and the permissions asked for; qpdf opens it with the password, and unlock takes it off', async () => {
    const res = await tool('protect', {
      pdf_base64: b64(three),
      protect: {
        user_password: 'open-me',
        owner_password: 'owner-secret',
        permissions: { printing: 'low', copying: false, modifying: false, annotating: true, filling_forms: true },
      },
      export_type: 'binary',
    });
    expect(res.status, res.bytes.toString().slice(0, 300)).toBe(200);
    const shown = qpdf(res.bytes, ['--show-encryption', '--password=owner-secret']) as string;
    expect(shown).toMatch(/R = 6/);
    expect(shown).toMatch(/file encryption method: AESv3/);
    expect(shown).toMatch(/print low resolution: allowed/);
    expect(shown).toMatch(/print high resolution: not allowed/);
    expect(shown).toMatch(/extract for any purpose: not allowed/);
    expect(shown).toMatch(/extract for accessibility: allowed/);
    expect(shown).toMatch(/modify annotations: allowed/);
    expect(shown).toMatch(/modify other: not allowed/);
    expect(() => qpdf(res.bytes, ['--decrypt'], true)).toThrow(/invalid password/);
    const opened = qpdf(res.bytes, ['--password=open-me', '--decrypt'], true) as Buffer;
    expect(flat(pdfPageText(opened, 2))).toBe('Three page 2');

    const unlocked = await tool('unlock', {
      pdf_base64: b64(res.bytes),
      password: 'owner-secret',
      export_type: 'binary',
    });
    expect(unlocked.status).toBe(200);
    expect(qpdf(unlocked.bytes, ['--show-encryption'])).toMatch(/File is not encrypted/);
    expect(pdfPages(unlocked.bytes)).toBe(3);
    // The passwords are never echoed in an answer.
    expect(JSON.stringify(res.headers)).not.toContain('owner-secret');
  });

  it('draws a Cyrillic watermark on the pages named and no others', async () => {
    const res = await tool('watermark', {
      pdf_base64: b64(three),
      watermark: { text: WATERMARK, pages: '1,3', color: '#C00000', font_size: 36 },
      export_type: 'binary',
    });
    expect(res.status, res.bytes.toString().slice(0, 300)).toBe(200);
    expect(flat(pdfPageText(res.bytes, 1))).toContain(WATERMARK);
    expect(flat(pdfPageText(res.bytes, 2))).toBe('Three page 2');
    expect(flat(pdfPageText(res.bytes, 3))).toContain(WATERMARK);
    expect(flat(pdfPageText(res.bytes, 3))).toContain('Three page 3');
    expect(pdfTool('pdffonts', res.bytes)).toMatch(/NotoSans-Regular\s+CID TrueType\s+Identity-H\s+yes yes yes/);
  });

  it('draws Chinese, Japanese and Korean text in an embedded font', async () => {
    const res = await tool('watermark', {
      pdf_base64: b64(three),
      watermark: { text: '草稿 下書き', rotation: 0 },
      export_type: 'binary',
    });
    expect(res.status, res.bytes.toString().slice(0, 300)).toBe(200);
    expect(flat(pdfPageText(res.bytes, 2))).toContain('草稿 下書き');
    expect(pdfTool('pdffonts', res.bytes)).toMatch(/DroidSansFallback\S*\s+CID TrueType\s+Identity-H\s+yes yes yes/);
    const korean = await tool('watermark', {
      pdf_base64: b64(three),
      watermark: { text: '초안 문서', rotation: 0 },
      export_type: 'binary',
    });
    expect(korean.status, korean.bytes.toString().slice(0, 300)).toBe(200);
    expect(flat(pdfPageText(korean.bytes, 1))).toContain('초안 문서');
    expect(pdfTool('pdffonts', korean.bytes)).toMatch(/NanumGothic\S*\s+CID TrueType\s+Identity-H\s+yes yes yes/);
  });

  it('lays out Arabic, Hebrew, Devanagari, Thai and conjoining Hangul text with Chromium, shaped, reading as one string', async () => {
    const marks = [
      { text: 'गोपनीय दस्तावेज़', font: /NotoSansDevanagari/ },
      { text: 'เอกสารลับ', font: /NotoSansThai/ },
      // Conjoining jamo (U+1100…), composed into the syllables 한글 by shaping.
      { text: 'DRAFT \u1112\u1161\u11AB\u1100\u1173\u11AF', font: /NanumGothic|NotoSansCJK/ },
    ];
    for (const { text, font } of marks) {
      const res = await tool('watermark', {
        pdf_base64: b64(three),
        watermark: { text, pages: '2', font_size: 30 },
        export_type: 'binary',
      });
      expect(res.status, res.bytes.toString().slice(0, 300)).toBe(200);
      expect(flat(pdfPageText(res.bytes, 2)).normalize('NFC')).toContain(text.normalize('NFC'));
      expect(flat(pdfPageText(res.bytes, 1))).toBe('Three page 1');
      expect(pdfTool('pdffonts', res.bytes)).toMatch(font);
    }
    // Right to left: the span reads as the text in reading order, which poppler's pdftotext prints
    // reversed (it takes a right-to-left /ActualText for visual order); either way one run, not scattered letters.
    for (const text of ['سري للغاية', 'סודי ביותר', 'DRAFT مسودة']) {
      const res = await tool('watermark', {
        pdf_base64: b64(three),
        watermark: { text, pages: '1' },
        export_type: 'binary',
      });
      expect(res.status, res.bytes.toString().slice(0, 300)).toBe(200);
      const read = flat(pdfPageText(res.bytes, 1)).replace(/[\u200e\u200f\u202a-\u202e]/g, '');
      const rightToLeft = text.replace(/[\u0590-\u08ff]+( [\u0590-\u08ff]+)*/g, (run) => [...run].reverse().join(''));
      expect(read).toContain(rightToLeft);
      expect(read).toContain('Three page 1');
    }
  });

  it("keeps a laid-out mark for its own account only: another account's same text is laid out anew", async () => {
    const other = await t.createAccount({ credits: 5, plan: 'enterprise' });
    const text = 'सीमित वितरण';
    const renders = () => t.services.renderer.stats().rendersTotal;
    const mark = (apiKey: string) =>
      t.request('POST', '/v1/pdf-tools/watermark', {
        apiKey,
        body: { pdf_base64: b64(three), watermark: { text }, export_type: 'binary' },
      });
    const before = renders();
    expect((await mark(user.apiKey)).status).toBe(200);
    expect(renders()).toBe(before + 1);
    expect((await mark(user.apiKey)).status).toBe(200);
    expect(renders(), "the same account's mark is kept").toBe(before + 1);
    const theirs = await mark(other.apiKey);
    expect(theirs.status).toBe(200);
    expect(renders(), "another account's is not taken from it").toBe(before + 2);
    expect(flat(pdfPageText(theirs.bytes, 1))).toContain(text);
  });

  it("draws an image asset from the account's library under the page content", async () => {
    const uploaded = await t.request('POST', '/v1/assets', {
      apiKey: user.apiKey,
      body: { name: 'marks/stamp.png', content_base64: b64(solidPng(120, 60, 90)) },
    });
    expect(uploaded.status).toBe(201);
    const res = await tool('watermark', {
      pdf_base64: b64(three),
      watermark: { asset: 'marks/stamp.png', layer: 'under', position: 'bottom-right', rotation: 0 },
      export_type: 'binary',
    });
    expect(res.status, res.bytes.toString().slice(0, 300)).toBe(200);
    const images = pdfTool('pdfimages', res.bytes, ['-list'])
      .split('\n')
      .filter((line) => /^\s+\d+\s+\d+\s+image\s+120\s+60/.test(line));
    expect(images).toHaveLength(3);
  });

  it('draws a PDF asset (its first page, as vector content), and a document cannot load one', async () => {
    const stamp = await makePdf('Vector stamp', 1);
    const uploaded = await t.request('POST', '/v1/assets', {
      apiKey: user.apiKey,
      body: { name: 'marks/stamp.pdf', content_base64: b64(stamp) },
    });
    expect(uploaded.status, JSON.stringify(uploaded.body)).toBe(201);
    expect(uploaded.body.content_type).toBe('application/pdf');
    const res = await tool('watermark', {
      pdf_base64: b64(three),
      watermark: { asset: 'marks/stamp.pdf', opacity: 0.5, rotation: 0 },
      export_type: 'binary',
    });
    expect(res.status, res.bytes.toString().slice(0, 300)).toBe(200);
    for (const page of [1, 2, 3]) expect(flat(pdfPageText(res.bytes, page))).toContain('Vector stamp page 1');
    expect(
      pdfTool('pdfimages', res.bytes, ['-list'])
        .split('\n')
        .slice(2)
        .filter((line) => line.trim() !== ''),
    ).toEqual([]);
    // In a template the PDF asset is refused with a warning: documents load images, fonts and stylesheets.
    const { page: templateId } = await createTemplates(t, user.apiKey, {
      page: { name: 'PDF asset in HTML', html: `<p>Body</p><img src="{{ asset('marks/stamp.pdf') }}">` },
    });
    const made = await t.request('POST', '/v1/pdf/create', {
      apiKey: user.apiKey,
      body: { template_id: templateId, data: {} },
    });
    expect(made.status).toBe(200);
    expect(made.body.warnings).toEqual([
      expect.objectContaining({
        code: 'RESOURCE_TYPE_REFUSED',
        message: expect.stringContaining('PDF assets are for watermarks'),
      }),
    ]);
  });

  it('splits by ranges into links, and every n pages into a zip or its bytes', async () => {
    const links = await tool('split', { pdf_base64: b64(five), ranges: ['1-2', '3-'], filename: 'five' });
    expect(links.status, JSON.stringify(links.body)).toBe(200);
    expect(links.body.files.map((f: { filename: string; pages: string }) => [f.filename, f.pages])).toEqual([
      ['five-1-2.pdf', '1-2'],
      ['five-3-5.pdf', '3-5'],
    ]);
    const parts = await Promise.all(links.body.files.map((f: { url: string }) => download(f.url)));
    expect(parts.map(pdfPages)).toEqual([2, 3]);
    expect(flat(pdfPageText(parts[1]!, 1))).toBe('Five page 3');

    const zipped = await tool('split', { pdf_base64: b64(five), every: 2, export_type: 'zip', filename: 'pairs' });
    expect(zipped.status).toBe(200);
    expect(zipped.body.filename).toBe('pairs.zip');
    expect(zipNames(await download(zipped.body.url))).toEqual(['pairs-1-2.pdf', 'pairs-3-4.pdf', 'pairs-5.pdf']);

    const bytes = await tool('split', { pdf_base64: b64(five), every: 4, export_type: 'binary' });
    expect(bytes.headers.get('content-type')).toBe('application/zip');
    expect(zipNames(bytes.bytes)).toEqual(['document-1-4.pdf', 'document-5.pdf']);
  });

  it('flattens a form: no fields left, the value in the page text', async () => {
    const form = await makeForm();
    expect(JSON.parse(qpdf(form, ['--json', '--json-key=acroform']) as string).acroform.fields).toHaveLength(2);
    const res = await tool('flatten', { pdf_base64: b64(form), export_type: 'binary' });
    expect(res.status).toBe(200);
    const { acroform } = JSON.parse(qpdf(res.bytes, ['--json', '--json-key=acroform']) as string);
    expect(acroform).toMatchObject({ fields: [], hasacroform: false });
    expect(pdfText(res.bytes)).toContain('Ada Lovelace');
  });

  it('writes metadata that pdfinfo shows', async () => {
    const res = await tool('metadata', {
      pdf_base64: b64(three),
      metadata: { title: 'Quarterly report', author: 'Ада Лавлейс', subject: 'Numbers', keywords: ['report', 'q3'] },
      export_type: 'binary',
    });
    expect(res.status).toBe(200);
    expect(pdfInfo(res.bytes)).toMatchObject({
      Title: 'Quarterly report',
      Author: 'Ада Лавлейс',
      Subject: 'Numbers',
      Keywords: 'report, q3',
      Pages: '3',
    });
  });

  it('refuses with a 422 naming the problem, charging nothing', async () => {
    await settled();
    const before = await balance();
    const locked = qpdf(three, ['--encrypt', 'user-secret', 'owner-secret', '256', '--'], true) as Buffer;
    // A PDF's first and last bytes around nothing readable: stored (the type is read from its ends), refused when drawn.
    expect(
      (
        await t.request('POST', '/v1/assets', {
          apiKey: user.apiKey,
          body: { name: 'marks/broken.pdf', content_base64: b64(Buffer.from('%PDF-1.7\nnot a PDF body\n%%EOF\n')) },
        })
      ).status,
    ).toBe(201);
    const cases: [string, string, unknown, (string | number)[], RegExp][] = [
      [
        'a wrong unlock password',
        'unlock',
        { pdf_base64: b64(locked), password: 'guess' },
        ['body', 'password'],
        /password does not open/,
      ],
      [
        'an encrypted input to rotate',
        'rotate',
        { pdf_base64: b64(locked), rotation: 90 },
        ['body', 'pdf_base64'],
        /encrypted.*unlock/,
      ],
      [
        'an encrypted input to watermark',
        'watermark',
        { pdf_base64: b64(locked), watermark: { text: 'X' } },
        ['body', 'pdf_base64'],
        /encrypted/,
      ],
      [
        'unlocking what is not locked',
        'unlock',
        { pdf_base64: b64(three), password: 'x' },
        ['body', 'pdf_base64'],
        /not encrypted/,
      ],
      [
        'text no font here draws',
        'watermark',
        { pdf_base64: b64(three), watermark: { text: 'ሰላም' } },
        ['body', 'watermark', 'text'],
        /ሰ.*U\+1230/,
      ],
      [
        'a character no font here draws (private use)',
        'watermark',
        { pdf_base64: b64(three), watermark: { text: 'DRAFT \uE000' } },
        ['body', 'watermark', 'text'],
        /No font here draws "\uE000" \(U\+E000\)/,
      ],
      [
        'a watermark page past the end',
        'watermark',
        { pdf_base64: b64(three), watermark: { text: 'X', pages: '2-4' } },
        ['body', 'watermark', 'pages'],
        /outside the document/,
      ],
      [
        'an asset that is not there',
        'watermark',
        { pdf_base64: b64(three), watermark: { asset: 'nope.png' } },
        ['body', 'watermark', 'asset'],
        /no asset named/,
      ],
      [
        'a PDF asset that does not open',
        'watermark',
        { pdf_base64: b64(three), watermark: { asset: 'marks/broken.pdf' } },
        ['body', 'watermark', 'asset'],
        /could not be read/,
      ],
      [
        'the same owner and user password',
        'protect',
        { pdf_base64: b64(three), protect: { user_password: 'same', owner_password: 'same' } },
        ['body', 'protect', 'owner_password'],
        /differ/,
      ],
      [
        'a split range past the end',
        'split',
        { pdf_base64: b64(three), ranges: ['1', '4-'] },
        ['body', 'ranges', 1],
        /outside the document/,
      ],
      [
        'ranges and every together',
        'split',
        { pdf_base64: b64(three), ranges: ['1'], every: 1 },
        ['body', 'every'],
        /exactly one/,
      ],
    ];
    for (const [what, name, body, loc, msg] of cases) {
      const res = await tool(name, body);
      expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(422);
      expect(res.body.detail[0].loc, what).toEqual(loc);
      expect(res.body.detail[0].msg, what).toMatch(msg);
    }
    await settled();
    expect(await balance()).toBe(before);
  });
});

describe('finishing on create', () => {
  let templateId: string;
  const finishing = {
    watermark: { text: WATERMARK, pages: '1', opacity: 0.2 },
    metadata: { title: 'Invoice 42', author: 'Acme GmbH', keywords: ['invoice'] },
    protect: {
      user_password: 'reader-pass',
      owner_password: 'owner-pass-42',
      permissions: { printing: 'high', copying: true },
    },
  };

  beforeAll(async () => {
    ({ invoice: templateId } = await createTemplates(t, user.apiKey, {
      invoice: {
        name: 'Invoice',
        html: '<h1>Invoice {{ number }}</h1><p style="page-break-after:always">Page one</p><p>Page two</p>',
      },
    }));
  });

  it('watermarks, titles and protects one document end to end', async () => {
    const res = await t.request('POST', '/v1/pdf/create', {
      apiKey: user.apiKey,
      body: { template_id: templateId, data: { number: 42 }, export_type: 'binary', ...finishing },
    });
    expect(res.status, res.bytes.toString().slice(0, 300)).toBe(200);
    expect(qpdf(res.bytes, ['--show-encryption', '--password=owner-pass-42'])).toMatch(/file encryption method: AESv3/);
    const opened = qpdf(res.bytes, ['--password=reader-pass', '--decrypt'], true) as Buffer;
    expect(pdfPages(opened)).toBe(2);
    expect(flat(pdfPageText(opened, 1))).toContain(WATERMARK);
    expect(flat(pdfPageText(opened, 2))).not.toContain('DRAFT');
    expect(pdfInfo(opened)).toMatchObject({ Title: 'Invoice 42', Author: 'Acme GmbH', Keywords: 'invoice' });
  });

  it('runs the same through create-async, with the passwords sealed in the job row', async () => {
    const res = await t.request('POST', '/v1/pdf/create-async', {
      apiKey: user.apiKey,
      body: { template_id: templateId, data: { number: 43 }, ...finishing },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const row = await t.services.database.db
      .selectFrom('jobs')
      .select('options')
      .where('id', '=', res.body.job_id)
      .executeTakeFirstOrThrow();
    expect(row.options).not.toContain('reader-pass');
    expect(row.options).not.toContain('owner-pass-42');
    const pdf = await completedJobPdf(t, user.apiKey, res.body.job_id, 90_000);
    const opened = qpdf(pdf, ['--password=reader-pass', '--decrypt'], true) as Buffer;
    expect(flat(pdfPageText(opened, 1))).toContain('Invoice 43');
    expect(flat(pdfPageText(opened, 1))).toContain(WATERMARK);
  });

  it("marks a PDF/A-2b document with Arabic text that still passes the service's own PDF/A check", async () => {
    const res = await t.request('POST', '/v1/pdf/create', {
      apiKey: user.apiKey,
      body: {
        template_id: templateId,
        data: { number: 7 },
        export_type: 'binary',
        pdf_variant: 'pdf/a-2b',
        watermark: { text: 'نسخة', pages: '1' },
      },
    });
    expect(res.status, res.bytes.toString().slice(0, 300)).toBe(200);
    expect(await checkPdfA(res.bytes, 2)).toEqual([]);
    expect(flat(pdfPageText(res.bytes, 1))).toContain('Invoice 7');
    expect(pdfTool('pdffonts', res.bytes)).toMatch(/Arabic|DejaVuSans/);
  });

  it('refuses a PDF asset as the watermark of a PDF/A document before any charge', async () => {
    expect(
      (
        await t.request('POST', '/v1/assets', {
          apiKey: user.apiKey,
          body: { name: 'marks/seal.pdf', content_base64: b64(await makePdf('Seal', 1)) },
        })
      ).status,
    ).toBe(201);
    await settled();
    const before = await balance();
    const res = await t.request('POST', '/v1/pdf/create', {
      apiKey: user.apiKey,
      body: {
        template_id: templateId,
        data: { number: 1 },
        pdf_variant: 'pdf/a-2b',
        watermark: { asset: 'marks/seal.pdf' },
      },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({
      loc: ['body', 'watermark', 'asset'],
      msg: expect.stringContaining('PDF/A'),
    });
    expect(await balance()).toBe(before);
  });

  it('refuses protect with PDF/A before any charge', async () => {
    await settled();
    const before = await balance();
    const res = await t.request('POST', '/v1/pdf/create', {
      apiKey: user.apiKey,
      body: { template_id: templateId, data: { number: 1 }, pdf_variant: 'pdf/a-2b', protect: finishing.protect },
    });
    expect(res.status).toBe(422);
    expect(res.body.detail[0]).toMatchObject({
      loc: ['body', 'protect'],
      msg: expect.stringMatching(/PDF\/A forbids encryption/),
    });
    expect(JSON.stringify(res.body)).not.toContain('owner-pass-42');
    await settled();
    expect(await balance()).toBe(before);
  });
});
