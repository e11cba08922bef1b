/**
 * The PDF tools over real HTTP on SQLite and PostgreSQL, with real qpdf and a real loopback file server:
 * merge order and page counts, extract order, rotation angles added to the pages' own (as pdfinfo and
 * pdftotext read them), pdf_url downloads (allowed on loopback only with PRESSROOM_ALLOW_PRIVATE_NETWORKS),
 * Idempotency-Key replays charged once, binary answers, and every refusal charging nothing and storing
 * nothing. No Chromium: the input PDFs are made with pdf-lib.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument, PDFName, PDFNumber, StandardFonts, degrees } from '@cantoo/pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENT_DIALECTS } from '../../support/databases.js';
import { numberArrayPdf } from '../../support/documents/hostile-pdfs.js';
import { pdfInfo, pdfPageText, pdfPages } from '../../support/documents/pdf-tools.js';
import { startTestApp, until, type TestApp } from '../../support/test-app.js';

/** A PDF whose page i reads `<name> page i`; `rotations[i]` sets page i's own /Rotate, `inherited` the page tree's. */
async function makePdf(
  name: string,
  pages: number,
  options: { rotations?: Record<number, number>; inherited?: number } = {},
): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i += 1) {
    const page = doc.addPage([300, 400]);
    page.drawText(`${name} page ${i}`, { x: 30, y: 300, size: 18, font });
    const own = options.rotations?.[i];
    if (own !== undefined) page.setRotation(degrees(own));
    else page.node.delete(PDFName.of('Rotate'));
  }
  if (options.inherited !== undefined) doc.catalog.Pages().set(PDFName.of('Rotate'), PDFNumber.of(options.inherited));
  return Buffer.from(await doc.save());
}

/** qpdf --encrypt: with a user password (cannot be opened), or only an owner password (opens, but encrypted). */
function encrypt(pdf: Buffer, userPassword: string): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'pdf-tools-test-'));
  try {
    writeFileSync(join(dir, 'in.pdf'), pdf);
    execFileSync('qpdf', [
      '--encrypt',
      userPassword,
      'owner-secret',
      '256',
      '--',
      join(dir, 'in.pdf'),
      join(dir, 'out.pdf'),
    ]);
    return readFileSync(join(dir, 'out.pdf'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The text of each page, trimmed. */
const pageTexts = (pdf: Buffer) => Array.from({ length: pdfPages(pdf) }, (_, i) => pdfPageText(pdf, i + 1).trim());
/** Each page's rotation as `pdfinfo -f 1 -l N` prints it. */
const rotations = (pdf: Buffer) => {
  const n = pdfPages(pdf);
  const info = pdfInfo(pdf, ['-f', '1', '-l', String(n)]);
  return Array.from({ length: n }, (_, i) => Number(info[`Page ${String(i + 1).padStart(4)} rot`]));
};
const b64 = (pdf: Buffer) => pdf.toString('base64');

let server: Server;
let fileBase: string;
const served = new Map<string, { type: string; body: Buffer }>();
const seen: string[] = [];

let alpha: Buffer;
let bravo: Buffer;
let charlie: Buffer;
let delta: Buffer;
let turned: Buffer;

beforeAll(async () => {
  [alpha, bravo, charlie, delta] = await Promise.all([
    makePdf('Alpha', 2),
    makePdf('Bravo', 3),
    makePdf('Charlie', 1),
    makePdf('Delta', 5),
  ]);
  // Page 2 has its own 90; pages 1 and 3 inherit 180 from the page tree.
  turned = await makePdf('Turned', 3, { rotations: { 2: 90 }, inherited: 180 });
  served.set('/charlie.pdf', { type: 'application/pdf', body: charlie });
  served.set('/page.html', { type: 'text/html', body: Buffer.from('<html><body>Not here</body></html>') });
  server = createServer((req, res) => {
    seen.push(req.url ?? '');
    if (req.url === '/to-charlie') return void res.writeHead(302, { location: '/charlie.pdf' }).end();
    const file = served.get(req.url ?? '');
    if (!file) return void res.writeHead(404).end('missing');
    res.writeHead(200, { 'content-type': file.type }).end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fileBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
});

describe.each(DOCUMENT_DIALECTS)('PDF tools on %s', (dialect) => {
  let t: TestApp;
  let user: { accountId: string; apiKey: string };

  const tool = (name: string, body: unknown, headers: Record<string, string> = {}, app = t, apiKey = user.apiKey) =>
    app.request('POST', `/v1/pdf-tools/${name}`, { apiKey, body, headers });
  const balance = async (app = t, apiKey = user.apiKey) =>
    (await app.request('GET', '/v1/account', { apiKey })).body.credits as number;
  const transactions = async (app = t, apiKey = user.apiKey) =>
    (await app.request('GET', '/v1/account/transactions?limit=1000', { apiKey })).body.transactions as {
      transaction_type: string;
      template_id: string | null;
      tool?: string | null;
    }[];
  const storedFiles = async (app: TestApp, accountId: string) =>
    (await app.services.database.db.selectFrom('files').select('id').where('account_id', '=', accountId).execute())
      .length;
  /** No reservation left pending: every charge of the account was posted or voided. */
  const settled = (app = t, accountId = user.accountId) =>
    until(async () => (await app.services.charges.pendingCount(accountId)) === 0, 30_000, 'charges settled');

  beforeAll(async () => {
    t = await startTestApp(dialect);
    user = await t.createAccount({ credits: 100, plan: 'enterprise' });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('merges base64 and downloaded PDFs in the order given, behind a signed link, for one credit recorded with its tool, without a template', async () => {
    const before = await balance();
    const res = await tool('merge', {
      pdfs: [{ pdf_base64: b64(alpha) }, { pdf_url: `${fileBase}/to-charlie` }, { pdf_base64: b64(bravo) }],
      filename: 'bundle',
      expiration: 600,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      url: expect.stringContaining('/bundle.pdf?'),
      filename: 'bundle.pdf',
      credits_remaining: before - 1,
      expires_in: 600,
    });
    const link = new URL(res.body.url);
    const file = await t.request('GET', `${link.pathname}${link.search}`);
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(pdfPages(file.bytes)).toBe(6);
    expect(pageTexts(file.bytes)).toEqual([
      'Alpha page 1',
      'Alpha page 2',
      'Charlie page 1',
      'Bravo page 1',
      'Bravo page 2',
      'Bravo page 3',
    ]);
    await settled();
    expect(await balance()).toBe(before - 1);
    expect((await transactions())[0]).toMatchObject({ transaction_type: 'PDFGEN', template_id: null, tool: 'merge' });
  });

  it('extracts pages in the order given, repeats and backward ranges included, and answers bytes for export_type binary', async () => {
    const res = await tool('extract-pages', {
      pdf_base64: b64(delta),
      pages: '3, 1-2',
      export_type: 'binary',
      filename: 'picked',
    });
    expect(res.status, res.bytes.toString().slice(0, 300)).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toContain('picked.pdf');
    expect(Number(res.headers.get('x-credits-remaining'))).toBeGreaterThan(0);
    expect(pageTexts(res.bytes)).toEqual(['Delta page 3', 'Delta page 1', 'Delta page 2']);

    const backwards = await tool('extract-pages', {
      pdf_url: `${fileBase}/charlie.pdf`,
      pages: '1,1',
      export_type: 'binary',
    });
    expect(pageTexts(backwards.bytes)).toEqual(['Charlie page 1', 'Charlie page 1']);
    const reversed = await tool('extract-pages', { pdf_base64: b64(delta), pages: '5-3,1', export_type: 'binary' });
    expect(pageTexts(reversed.bytes)).toEqual(['Delta page 5', 'Delta page 4', 'Delta page 3', 'Delta page 1']);
    expect((await transactions())[0]).toMatchObject({
      transaction_type: 'PDFGEN',
      template_id: null,
      tool: 'extract-pages',
    });
  });

  it("adds rotations to each page's own, inherited ones included: every page, or the pages a map names", async () => {
    expect(rotations(turned)).toEqual([180, 90, 180]);
    const all = await tool('rotate', { pdf_base64: b64(turned), rotation: 90, export_type: 'binary' });
    expect(all.status).toBe(200);
    expect(rotations(all.bytes)).toEqual([270, 180, 270]);
    expect(pageTexts(all.bytes)).toEqual(['Turned page 1', 'Turned page 2', 'Turned page 3']);

    const some = await tool('rotate', {
      pdf_base64: b64(turned),
      page_rotations: { '2': 270, '3': 180 },
      export_type: 'binary',
    });
    expect(rotations(some.bytes)).toEqual([180, 0, 0]);
    const none = await tool('rotate', { pdf_base64: b64(turned), rotation: 0, export_type: 'binary' });
    expect(rotations(none.bytes)).toEqual([180, 90, 180]);
    expect((await transactions())[0]).toMatchObject({ transaction_type: 'PDFGEN', template_id: null, tool: 'rotate' });
  });

  it('answers a repeated Idempotency-Key with the first result, charged once, for links and for bytes', async () => {
    await settled();
    const before = await balance();
    const body = { pdfs: [{ pdf_base64: b64(alpha) }, { pdf_base64: b64(charlie) }] };
    const first = await tool('merge', body, { 'idempotency-key': `merge-${dialect}` });
    const again = await tool('merge', body, { 'idempotency-key': `merge-${dialect}` });
    expect(first.status).toBe(200);
    expect(again.body.url).toBe(first.body.url);
    expect(again.body.credits_remaining).toBe(before - 1);

    const binary = { pdf_base64: b64(delta), rotation: 180, export_type: 'binary' };
    const bytes = await tool('rotate', binary, { 'idempotency-key': `rotate-${dialect}` });
    const replay = await tool('rotate', binary, { 'idempotency-key': `rotate-${dialect}` });
    expect(replay.status).toBe(200);
    expect(replay.bytes.equals(bytes.bytes)).toBe(true);
    expect(rotations(replay.bytes)).toEqual([180, 180, 180, 180, 180]);

    const reused = await tool('rotate', { ...binary, rotation: 90 }, { 'idempotency-key': `rotate-${dialect}` });
    expect(reused.status).toBe(422);
    expect(reused.body.detail[0].loc).toEqual(['header', 'idempotency-key']);
    await settled();
    expect(await balance()).toBe(before - 2);
  });

  it('refuses what is wrong with the request or its PDFs with a 422 naming it, charging nothing and storing nothing', async () => {
    await settled();
    const notPdf = Buffer.from('Just some text, not a PDF at all.');
    const damaged = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(200, 'x')]);
    const cases: [string, string, unknown, (string | number)[], string | RegExp][] = [
      [
        'not a PDF',
        'merge',
        { pdfs: [{ pdf_base64: b64(alpha) }, { pdf_base64: b64(notPdf) }] },
        ['body', 'pdfs', 1, 'pdf_base64'],
        /not a PDF/,
      ],
      [
        'a damaged PDF',
        'rotate',
        { pdf_base64: b64(damaged), rotation: 90 },
        ['body', 'pdf_base64'],
        /not a readable PDF/,
      ],
      [
        'a password-protected PDF',
        'extract-pages',
        { pdf_base64: b64(encrypt(alpha, 'user-secret')), pages: '1' },
        ['body', 'pdf_base64'],
        /encrypted/,
      ],
      [
        'an encrypted PDF that opens without a password',
        'rotate',
        { pdf_base64: b64(encrypt(alpha, '')), rotation: 90 },
        ['body', 'pdf_base64'],
        /encrypted/,
      ],
      [
        'a page outside the document',
        'extract-pages',
        { pdf_base64: b64(bravo), pages: '2, 4' },
        ['body', 'pages'],
        'page 4 is outside the document, which has 3 pages',
      ],
      [
        'a range outside the document',
        'extract-pages',
        { pdf_base64: b64(bravo), pages: '2-7' },
        ['body', 'pages'],
        'the range 2-7 is outside the document, which has 3 pages',
      ],
      [
        'a selection that is not one',
        'extract-pages',
        { pdf_base64: b64(bravo), pages: '1-' },
        ['body', 'pages'],
        /"1-" is not a page number/,
      ],
      ['page 0', 'extract-pages', { pdf_base64: b64(bravo), pages: '0' }, ['body', 'pages'], /numbered from 1/],
      ['a bad rotation', 'rotate', { pdf_base64: b64(bravo), rotation: 45 }, ['body', 'rotation'], /0.*90.*180.*270/],
      [
        'a bad angle in the map',
        'rotate',
        { pdf_base64: b64(bravo), page_rotations: { '1': 91 } },
        ['body', 'page_rotations', 1],
        /0.*90.*180.*270/,
      ],
      [
        'a map key that is no page',
        'rotate',
        { pdf_base64: b64(bravo), page_rotations: { first: 90 } },
        ['body', 'page_rotations', 'first'],
        /not a page number/,
      ],
      [
        'a mapped page outside the document',
        'rotate',
        { pdf_base64: b64(bravo), page_rotations: { '9': 90 } },
        ['body', 'page_rotations', '9'],
        /page 9 is outside the document/,
      ],
      [
        'rotation and page_rotations together',
        'rotate',
        { pdf_base64: b64(bravo), rotation: 90, page_rotations: { '1': 90 } },
        ['body'],
        /not both/,
      ],
      [
        'no rotation at all',
        'rotate',
        { pdf_base64: b64(bravo), rotation: null, page_rotations: null },
        ['body'],
        /Give rotation/,
      ],
      ['no input', 'extract-pages', { pages: '1' }, ['body'], /pdf_url .* or pdf_base64/],
      [
        'two inputs in one',
        'rotate',
        { pdf_base64: b64(bravo), pdf_url: `${fileBase}/charlie.pdf`, rotation: 90 },
        ['body'],
        /not both/,
      ],
      ['one PDF to merge', 'merge', { pdfs: [{ pdf_base64: b64(alpha) }] }, ['body', 'pdfs'], /at least 2/],
      [
        'base64 that is not',
        'rotate',
        { pdf_base64: '%%% not base64 %%%', rotation: 90 },
        ['body', 'pdf_base64'],
        /not valid base64/,
      ],
      [
        'a URL that answers 404',
        'merge',
        { pdfs: [{ pdf_base64: b64(alpha) }, { pdf_url: `${fileBase}/missing.pdf` }] },
        ['body', 'pdfs', 1, 'pdf_url'],
        /HTTP 404/,
      ],
      [
        'a URL that answers a web page',
        'rotate',
        { pdf_url: `${fileBase}/page.html`, rotation: 90 },
        ['body', 'pdf_url'],
        /not a PDF/,
      ],
    ];
    const before = await balance();
    const ledger = (await transactions()).length;
    for (const [what, name, body, loc, msg] of cases) {
      const res = await tool(name, body);
      expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(422);
      expect(res.body.detail[0].loc, what).toEqual(loc);
      expect(res.body.detail[0].msg, what).toMatch(msg);
      // qpdf's words, without the names of our temporary files.
      expect(res.body.detail[0].msg, what).not.toMatch(/\/tmp\/|in\d+\.pdf/);
    }
    expect(await balance()).toBe(before);
    expect((await transactions()).length).toBe(ledger);
    expect(await t.services.charges.pendingCount(user.accountId)).toBe(0);
  });

  it('stops qpdf at its memory ceiling while reading an input: a 20 KB PDF whose page holds ten million numbers is a 422 PDF_TOO_COMPLEX naming it, charging nothing, and the service goes on', async () => {
    await settled();
    // Without the ceiling qpdf took 2.6 GB to read it, then the request was a 422 page_out_of_range.
    const hostile = numberArrayPdf(10_000_000, { in: 'page' });
    expect(hostile.length).toBeLessThan(21_000);
    const before = await balance();
    const ledger = (await transactions()).length;
    const files = await storedFiles(t, user.accountId);
    const res = await tool('extract-pages', { pdf_base64: b64(hostile), pages: '2' });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.error).toBe('PDF_TOO_COMPLEX');
    expect(res.body.message).toMatch(/^body\.pdf_base64: .*more than 2 GiB of memory.*nothing was charged/);
    expect(await balance()).toBe(before);
    expect((await transactions()).length).toBe(ledger);
    expect(await t.services.charges.pendingCount(user.accountId)).toBe(0);
    expect(await storedFiles(t, user.accountId)).toBe(files);
    const next = await tool('extract-pages', { pdf_base64: b64(bravo), pages: '2', export_type: 'binary' });
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(pageTexts(next.bytes)).toEqual(['Bravo page 2']);
  });

  it('stops qpdf at its memory ceiling while writing the result: the credit reserved for it is refunded and no file is stored', async () => {
    await settled();
    // The numbers sit in an object only the catalog names: counting pages does not read it, rewriting the
    // document does. Without the ceiling qpdf took 3 GB and the file was delivered and charged.
    const hostile = numberArrayPdf(10_000_000, { in: 'catalog' });
    const before = await balance();
    const ledger = (await transactions()).length;
    const files = await storedFiles(t, user.accountId);
    const res = await tool('rotate', { pdf_base64: b64(hostile), rotation: 90 });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.error).toBe('PDF_TOO_COMPLEX');
    expect(res.body.message).toMatch(/more than 2 GiB of memory.*nothing was charged/);
    await settled();
    expect(await balance()).toBe(before);
    const after = await transactions();
    expect(after).toHaveLength(ledger + 2);
    expect(
      after
        .slice(0, 2)
        .map((tx) => tx.transaction_type)
        .sort(),
    ).toEqual(['PDFGEN', 'REFUND']);
    expect(await storedFiles(t, user.accountId)).toBe(files);
  });

  it('refuses at zero credits (402) once the inputs are checked, charging and storing nothing', async () => {
    const broke = await t.createAccount({ credits: 0, plan: 'enterprise' });
    const res = await tool(
      'merge',
      { pdfs: [{ pdf_url: `${fileBase}/charlie.pdf` }, { pdf_base64: b64(alpha) }] },
      {},
      t,
      broke.apiKey,
    );
    // The inputs are read before the credit is reserved, so the download happened; the charge did not.
    expect(res.status).toBe(402);
    expect(res.body.error).toBe('INSUFFICIENT_CREDITS');
    expect(await balance(t, broke.apiKey)).toBe(0);
    expect(await transactions(t, broke.apiKey)).toEqual([]);
    expect(await storedFiles(t, broke.accountId)).toBe(0);
  });

  it('shares the per-account rate limit with every other call: over it, a tool answers 429 before reading its input, charging nothing', async () => {
    const tight = await t.createAccount({ credits: 5, rate_limit: { per_minute: 2 } });
    const first = await tool('rotate', { pdf_base64: b64(alpha), rotation: 90 }, {}, t, tight.apiKey);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.headers.get('x-ratelimit-remaining')).toBe('1');
    expect((await t.request('GET', '/v1/account', { apiKey: tight.apiKey })).headers.get('x-ratelimit-remaining')).toBe(
      '0',
    );
    seen.length = 0;
    const limited = await tool(
      'merge',
      { pdfs: [{ pdf_url: `${fileBase}/charlie.pdf` }, { pdf_base64: b64(alpha) }] },
      {},
      t,
      tight.apiKey,
    );
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(seen).toEqual([]);
    await settled(t, tight.accountId);
    const ledger = await t.services.database.db
      .selectFrom('credit_transactions')
      .select('transaction_type')
      .where('account_id', '=', tight.accountId)
      .where('transaction_type', 'in', ['PDFGEN', 'REFUND'])
      .execute();
    expect(ledger.map((row) => row.transaction_type)).toEqual(['PDFGEN']);
    expect(await storedFiles(t, tight.accountId)).toBe(1);
  });

  it('describes the three operations in the OpenAPI document as TemplateFox names them, with a PDF media type, and the document stays valid', async () => {
    const doc = (await t.request('GET', '/openapi.json')).body;
    const ops = ['merge', 'extract-pages', 'rotate'].map((name) => doc.paths[`/v1/pdf-tools/${name}`].post);
    expect(ops.map((op: { operationId: string }) => op.operationId)).toEqual([
      'mergePdf',
      'extractPdfPages',
      'rotatePdf',
    ]);
    for (const op of ops) {
      expect(Object.keys(op.responses['200'].content).sort()).toEqual(['application/json', 'application/pdf']);
      expect(op.requestBody.content['application/json'].example).toBeDefined();
    }
    // The example runs as it stands (what /docs "Try it out" sends).
    const example = ops[0].requestBody.content['application/json'].example;
    const tried = await tool('merge', { ...example, export_type: 'binary' });
    expect(pageTexts(tried.bytes)).toEqual(['Hello from Pressroom', 'Hello from Pressroom']);
    const { validate } = await import('@readme/openapi-parser');
    const result = await validate(structuredClone(doc));
    expect(result.valid, JSON.stringify((result as { errors?: unknown }).errors)).toBe(true);
  });

  it('refunds a run that fails after its credit was reserved: the result cannot be stored', async () => {
    // A storage root under a file: every put fails, after the inputs were checked and the credit reserved.
    const broken = await startTestApp(dialect, { PRESSROOM_STORAGE_URL: 'file:///dev/null/files' });
    try {
      const account = await broken.createAccount({ credits: 3, plan: 'enterprise' });
      const res = await tool(
        'merge',
        { pdfs: [{ pdf_base64: b64(alpha) }, { pdf_base64: b64(charlie) }] },
        {},
        broken,
        account.apiKey,
      );
      expect(res.status).toBe(502);
      expect(res.body.error).toBe('STORAGE_ERROR');
      await settled(broken, account.accountId);
      expect(await balance(broken, account.apiKey)).toBe(3);
      expect((await transactions(broken, account.apiKey)).map((tx) => tx.transaction_type).sort()).toEqual([
        'BONUS',
        'PDFGEN',
        'REFUND',
      ]);
    } finally {
      await broken.close();
    }
  });

  describe('without PRESSROOM_ALLOW_PRIVATE_NETWORKS, and with small bounds', () => {
    let strict: TestApp;
    let account: { accountId: string; apiKey: string };

    beforeAll(async () => {
      strict = await startTestApp(
        dialect,
        {
          PRESSROOM_ALLOW_PRIVATE_NETWORKS: 'false',
          // Above alpha + bravo (3.2 KB as @cantoo/pdf-lib writes them), below charlie + big.
          PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES: String(4 * 1024),
        },
        { tuning: { pdfTools: { maxPages: 4, maxMergeInputs: 3 } } },
      );
      account = await strict.createAccount({ credits: 10, plan: 'enterprise' });
    });
    afterAll(async () => {
      await strict?.close();
    });

    it('refuses loopback and plain-http URLs without connecting, and the bounds, all charging nothing', async () => {
      seen.length = 0;
      const port = new URL(fileBase).port;
      const cases: [unknown, string, (string | number)[], RegExp, number][] = [
        [
          { pdf_url: `https://127.0.0.1:${port}/charlie.pdf`, rotation: 90 },
          'rotate',
          ['body', 'pdf_url'],
          /public internet address/,
          422,
        ],
        [
          { pdf_url: `https://localhost:${port}/charlie.pdf`, rotation: 90 },
          'rotate',
          ['body', 'pdf_url'],
          /public internet address/,
          422,
        ],
        [{ pdf_url: `${fileBase}/charlie.pdf`, rotation: 90 }, 'rotate', ['body', 'pdf_url'], /https:\/\//, 422],
        [
          { pdf_base64: b64(delta), rotation: 90 },
          'rotate',
          ['body', 'pdf_base64'],
          /5 pages; the most an input may have is 4/,
          422,
        ],
        [
          { pdfs: [{ pdf_base64: b64(alpha) }, { pdf_base64: b64(bravo) }] },
          'merge',
          ['body', 'pdfs'],
          /would have 5 pages/,
          422,
        ],
        [
          { pdfs: Array.from({ length: 4 }, () => ({ pdf_base64: b64(charlie) })) },
          'merge',
          ['body', 'pdfs'],
          /at most 3/,
          422,
        ],
      ];
      for (const [body, name, loc, msg, status] of cases) {
        const res = await tool(name, body, {}, strict, account.apiKey);
        expect(res.status, JSON.stringify(res.body)).toBe(status);
        expect(res.body.detail[0].loc, JSON.stringify(res.body)).toEqual(loc);
        expect(res.body.detail[0].msg).toMatch(msg);
      }
      expect(seen).toEqual([]);

      // Over the byte bound: in the decoded inputs (422), or past the body limit it sets (413).
      const big = Buffer.concat([charlie, Buffer.alloc(2500, ' ')]);
      const over = await tool(
        'merge',
        { pdfs: [{ pdf_base64: b64(charlie) }, { pdf_base64: b64(big) }] },
        {},
        strict,
        account.apiKey,
      );
      expect(over.status).toBe(422);
      expect(over.body.detail[0]).toMatchObject({ loc: ['body', 'pdfs', 1, 'pdf_base64'], type: 'pdf_too_large' });
      const huge = await tool(
        'rotate',
        { pdf_base64: 'A'.repeat(2 * 1024 * 1024), rotation: 90 },
        {},
        strict,
        account.apiKey,
      );
      expect(huge.status).toBe(413);
      expect(huge.body.message).toContain('PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES');

      expect(await balance(strict, account.apiKey)).toBe(10);
      // Only the grant that opened the account: no PDFGEN, no REFUND.
      expect((await transactions(strict, account.apiKey)).map((tx) => tx.transaction_type)).toEqual(['BONUS']);
      expect(await storedFiles(strict, account.accountId)).toBe(0);
    });
  });
});
