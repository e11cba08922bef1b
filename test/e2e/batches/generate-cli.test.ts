/**
 * `pressroom generate` end to end, as a user runs it: the built CLI (`node bin/pressroom.js`) as a child
 * process, its environment holding no database or secret, against a real running service on loopback
 * (real Chromium; SQLite only: the CLI is a client of the API, whose storage batches.test.ts checks on both
 * databases). What is checked is what the user sees: the files it wrote and
 * their text (pdftotext), the zip's entries, what it printed, its exit code, and the account's credits.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfPages, pdfText } from '../../support/documents/pdf-tools.js';
import { runClient, spawnClient } from '../../support/cli.js';
import { createTemplates, startTestApp, until, type TestApp } from '../../support/test-app.js';
import { DOCUMENT_DIALECTS } from '../../support/databases.js';

const INVOICE = {
  name: 'CLI invoice',
  html: '<h1>Invoice {{ invoice_number }}</h1><p>Bill to {{ customer.name }}</p><p>Total due {{ total }}</p>',
  fields: [
    { key: 'invoice_number', label: 'Invoice number', type: 'string', required: true },
    { key: 'customer.name', label: 'Customer name', type: 'string', required: true },
    { key: 'total', label: 'Total', type: 'number', required: true },
  ],
};

const ROWS = [
  { invoice_number: 'INV-001', name: 'Ada Lovelace', total: '120.5' },
  { invoice_number: 'INV-002', name: 'Grace Hopper, Rear Admiral', total: '80' },
  { invoice_number: 'INV-003', name: 'Katherine Johnson', total: '42' },
];
const CSV = `invoice_number,customer.name,total\n${ROWS.map((r) => `${r.invoice_number},"${r.name}",${r.total}`).join('\n')}\n`;
const STARTING_CREDITS = 100;
/** Renders like INVOICE, but a total over 400 calls a string: that row fails when it renders, after the checks. */
const FRAGILE = {
  name: 'CLI fragile invoice',
  html: `${INVOICE.html}{% if total > 400 %}{{ invoice_number() }}{% endif %}`,
  fields: INVOICE.fields,
};

const work = mkdtempSync(join(tmpdir(), 'pressroom-generate-e2e-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let folders = 0;
/** A fresh folder for one run, with `rows.csv` in it when `csv` is given. */
function folder(csv?: string): string {
  const dir = join(work, String(++folders));
  mkdirSync(dir);
  if (csv !== undefined) writeFileSync(join(dir, 'rows.csv'), csv);
  return dir;
}

/** The row's own text is in `pdfTextOfIt` (pdftotext of its PDF, or of its page). */
function expectRowText(pdfTextOfIt: string, row: (typeof ROWS)[number]): void {
  const text = pdfTextOfIt.replace(/\s+/g, ' ');
  expect(text).toContain(`Invoice ${row.invoice_number}`);
  expect(text).toContain(`Bill to ${row.name}`);
  expect(text).toContain(`Total due ${row.total}`);
}

/** The entries of a zip, by name (unzip, as a user opens it). */
function zipEntries(zipPath: string): Map<string, Buffer> {
  const names = execFileSync('unzip', ['-Z1', zipPath], { encoding: 'utf8' }).split('\n').filter(Boolean);
  return new Map(
    names.map((name) => [name, execFileSync('unzip', ['-p', zipPath, name], { maxBuffer: 64 * 1024 * 1024 })]),
  );
}

describe.each(DOCUMENT_DIALECTS)('pressroom generate against a running service (%s)', (dialect) => {
  let t: TestApp;
  let apiKey: string;
  let templateId: string;
  let fragileId: string;
  const balance = async () => (await t.request('GET', '/v1/account', { apiKey })).body.credits as number;
  const generate = (args: string[], env: Record<string, string> = {}) =>
    runClient(['generate', '--url', t.baseUrl, '--key', apiKey, '--template', templateId, ...args], env);

  beforeAll(async () => {
    t = await startTestApp(dialect);
    t.services.startWorkers();
    ({ apiKey } = await t.createAccount({ credits: STARTING_CREDITS }));
    ({ invoice: templateId, fragile: fragileId } = await createTemplates(t, apiKey, {
      invoice: INVOICE,
      fragile: FRAGILE,
    }));
  });
  afterAll(async () => t?.close());

  it('a 3-row CSV gives three PDFs in --out, each named by --filename with its row’s text; exit code 0', async () => {
    const dir = folder(CSV);
    const before = await balance();
    const run = await generate([
      '--data',
      join(dir, 'rows.csv'),
      '--out',
      join(dir, 'pdfs'),
      '--filename',
      '{{ invoice_number }}',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(readdirSync(join(dir, 'pdfs')).sort(), 'three PDFs and nothing half-written').toEqual([
      'INV-001.pdf',
      'INV-002.pdf',
      'INV-003.pdf',
    ]);
    for (const row of ROWS) expectRowText(pdfText(readFileSync(join(dir, 'pdfs', `${row.invoice_number}.pdf`))), row);
    expect(run.stdout).toMatch(/^progress: 3\/3 done, 0 failed, /m);
    expect(run.stdout).toContain(`delivered 3 of 3 rows to ${join(dir, 'pdfs')}`);
    expect(run.stdout + run.stderr, 'the key is never printed').not.toContain(apiKey);
    expect(await balance()).toBe(before - 3);
  });

  it('renders the draft without --version, as its help says (issue 50: it said "the latest"), and a published version with it', async () => {
    const help = await runClient(['generate', '--help']);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain('(default: the draft, as the API)');
    expect(help.stdout).not.toContain('the latest');
    const id = (
      await t.request('POST', '/v1/templates', {
        apiKey,
        body: { name: 'CLI versions', html: '<p>Published {{ n }}</p>' },
      })
    ).body.id as string;
    expect((await t.request('POST', `/v1/templates/${id}/versions`, { apiKey, body: { tag: 'v1' } })).status).toBe(200);
    expect(
      (await t.request('PUT', `/v1/templates/${id}`, { apiKey, body: { html: '<p>Draft {{ n }}</p>' } })).status,
    ).toBe(200);
    const dir = folder('n\n1\n');
    const draft = await generate(['--template', id, '--data', join(dir, 'rows.csv'), '--out', join(dir, 'draft')]);
    expect(draft.code, draft.stderr).toBe(0);
    expect(pdfText(readFileSync(join(dir, 'draft', 'document-1.pdf')))).toContain('Draft 1');
    const published = await generate([
      '--template',
      id,
      '--version',
      'v1',
      '--data',
      join(dir, 'rows.csv'),
      '--out',
      join(dir, 'v1'),
    ]);
    expect(published.code, published.stderr).toBe(0);
    expect(pdfText(readFileSync(join(dir, 'v1', 'document-1.pdf')))).toContain('Published 1');
  });

  it('--zip writes one zip of the three PDFs, with the URL and key from PRESSROOM_URL and PRESSROOM_API_KEY', async () => {
    const dir = folder(CSV);
    const zip = join(dir, 'march.zip');
    const run = await runClient(
      [
        'generate',
        '--template',
        templateId,
        '--data',
        join(dir, 'rows.csv'),
        '--zip',
        zip,
        '--filename',
        'invoice-{{ invoice_number }}',
      ],
      {
        PRESSROOM_URL: t.baseUrl,
        PRESSROOM_API_KEY: apiKey,
      },
    );
    expect(run.code, run.stderr).toBe(0);
    const entries = zipEntries(zip);
    expect([...entries.keys()].sort()).toEqual(['invoice-INV-001.pdf', 'invoice-INV-002.pdf', 'invoice-INV-003.pdf']);
    for (const row of ROWS) expectRowText(pdfText(entries.get(`invoice-${row.invoice_number}.pdf`)!), row);
    expect(readdirSync(dir).sort(), 'the zip only, no temporary file left').toEqual(['march.zip', 'rows.csv']);
    expect(run.stdout).toContain(`delivered 3 of 3 rows to ${zip}`);
  });

  it('--resume sends only the rows whose PDF is not in --out yet, and leaves the one there alone', async () => {
    const dir = folder(CSV);
    const out = join(dir, 'pdfs');
    mkdirSync(out);
    writeFileSync(join(out, 'INV-002.pdf'), 'delivered by an earlier run');
    const before = await balance();
    const run = await generate([
      '--data',
      join(dir, 'rows.csv'),
      '--out',
      out,
      '--filename',
      '{{ invoice_number }}',
      '--resume',
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`--resume: 1 of 3 rows already in ${out}`);
    expect(run.stdout).toContain(`delivered 2 of 2 rows to ${out}; 1 more already there`);
    expect(readFileSync(join(out, 'INV-002.pdf'), 'utf8')).toBe('delivered by an earlier run');
    expectRowText(pdfText(readFileSync(join(out, 'INV-001.pdf'))), ROWS[0]!);
    expectRowText(pdfText(readFileSync(join(out, 'INV-003.pdf'))), ROWS[2]!);
    expect(await balance(), 'two documents sent, two charged').toBe(before - 2);
    const newest = (await t.request('GET', '/v1/pdf/batches?limit=1', { apiKey })).body.batches[0];
    expect(newest).toMatchObject({ total: 2, completed: 2, status: 'completed' });

    const again = await generate([
      '--data',
      join(dir, 'rows.csv'),
      '--out',
      out,
      '--filename',
      '{{ invoice_number }}',
      '--resume',
    ]);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('nothing left to send');
    expect(await balance()).toBe(before - 2);
  });

  it('NDJSON rows (both line shapes) into --out, named document-<row> by default', async () => {
    const dir = folder();
    const lines = ROWS.map((r, i) => {
      const data = { invoice_number: r.invoice_number, customer: { name: r.name }, total: Number(r.total) };
      return JSON.stringify(i === 1 ? { data } : data);
    });
    writeFileSync(join(dir, 'rows.ndjson'), `${lines.join('\n')}\n`);
    const run = await generate(['--data', join(dir, 'rows.ndjson'), '--out', join(dir, 'pdfs')]);
    expect(run.code, run.stderr).toBe(0);
    expect(readdirSync(join(dir, 'pdfs')).sort()).toEqual(['document-1.pdf', 'document-2.pdf', 'document-3.pdf']);
    ROWS.forEach((row, i) => expectRowText(pdfText(readFileSync(join(dir, 'pdfs', `document-${i + 1}.pdf`))), row));
  });

  it('a JSON array into --merged: one PDF, the rows in order, a page each', async () => {
    const dir = folder();
    writeFileSync(
      join(dir, 'rows.json'),
      JSON.stringify(
        ROWS.map((r) => ({ invoice_number: r.invoice_number, customer: { name: r.name }, total: Number(r.total) })),
      ),
    );
    const merged = join(dir, 'all.pdf');
    const run = await generate(['--data', join(dir, 'rows.json'), '--merged', merged]);
    expect(run.code, run.stderr).toBe(0);
    const pdf = readFileSync(merged);
    expect(pdfPages(pdf)).toBe(3);
    ROWS.forEach((row, i) => expectRowText(pdfText(pdf, { page: i + 1 }), row));
  });

  it('a row that fails when it renders: exit code 1, the others delivered, the row listed with its error, not charged', async () => {
    const dir = folder(CSV.replace('INV-003,"Katherine Johnson",42', 'INV-003,"Katherine Johnson",420'));
    const before = await balance();
    const run = await runClient([
      'generate',
      '--url',
      t.baseUrl,
      '--key',
      apiKey,
      '--template',
      fragileId,
      '--data',
      join(dir, 'rows.csv'),
      '--out',
      join(dir, 'pdfs'),
      '--filename',
      '{{ invoice_number }}',
    ]);
    expect(run.code, run.stderr).toBe(1);
    expect(readdirSync(join(dir, 'pdfs')).sort()).toEqual(['INV-001.pdf', 'INV-002.pdf']);
    expect(run.stderr).toMatch(/row 3 \(rows\.csv line 4\), INV-003\.pdf: TEMPLATE_RENDER_ERROR: .*not a function/);
    expect(run.stderr).toContain('1 of 3 rows not delivered');
    expect(run.stdout).toContain('delivered 2 of 3 rows');
    expect(await balance(), 'the failed row refunded').toBe(before - 2);
  });

  it('a row the template refuses is exit code 2 naming the row, line and column; nothing written or charged', async () => {
    const dir = folder(
      CSV.replace('INV-002,"Grace Hopper, Rear Admiral",80', 'INV-002,"Grace Hopper, Rear Admiral",twelve'),
    );
    const before = await balance();
    const batchesBefore = (await t.request('GET', '/v1/pdf/batches', { apiKey })).body.total;
    const run = await generate([
      '--data',
      join(dir, 'rows.csv'),
      '--out',
      join(dir, 'pdfs'),
      '--filename',
      '{{ invoice_number }}',
    ]);
    expect(run.code, run.stdout).toBe(2);
    expect(run.stderr).toContain('the service refused the batch (HTTP 422)');
    expect(run.stderr).toContain('row 2 (rows.csv line 3), total: Expected a number, got "twelve"');
    expect(readdirSync(join(dir, 'pdfs'))).toEqual([]);
    expect(await balance()).toBe(before);
    expect((await t.request('GET', '/v1/pdf/batches', { apiKey })).body.total).toBe(batchesBefore);
  });
});

describe('Ctrl-C while a batch waits for the workers', () => {
  let t: TestApp;
  let apiKey: string;
  let templateId: string;

  beforeAll(async () => {
    // No workers: the items stay pending, so the cancel finds every one of them unstarted.
    t = await startTestApp('sqlite');
    ({ apiKey } = await t.createAccount({ credits: STARTING_CREDITS }));
    ({ invoice: templateId } = await createTemplates(t, apiKey, { invoice: INVOICE }));
  });
  afterAll(async () => t?.close());

  it('cancels the batch, says what was delivered, refunds every row and exits 130', async () => {
    const dir = folder(CSV);
    const cli = spawnClient([
      'generate',
      '--url',
      t.baseUrl,
      '--key',
      apiKey,
      '--template',
      templateId,
      '--data',
      join(dir, 'rows.csv'),
      '--out',
      join(dir, 'pdfs'),
    ]);
    const started = await cli.waitForLog((line) => /^batch bat_\w+: 3 rows/.test(line.msg));
    const batchId = /^batch (bat_\w+)/.exec(started.msg)![1]!;
    expect((await t.request('GET', '/v1/account', { apiKey })).body.credits, 'reserved at acceptance').toBe(
      STARTING_CREDITS - 3,
    );
    process.kill(cli.pid, 'SIGINT');
    expect(await cli.exited).toBe(130);
    expect(cli.logs.map((l) => l.msg)).toContain(
      `cancelled: delivered 0 of 3 rows to ${join(dir, 'pdfs')}; 3 cancelled before they started (not charged)`,
    );
    expect(cli.stderrTail()).toContain(`cancelling batch ${batchId}`);
    const batch = (await t.request('GET', `/v1/pdf/batches/${batchId}`, { apiKey })).body;
    expect(batch).toMatchObject({ status: 'cancelled', cancelled: 3, completed: 0 });
    expect((await t.request('GET', '/v1/account', { apiKey })).body.credits).toBe(STARTING_CREDITS);
    expect(readdirSync(join(dir, 'pdfs'))).toEqual([]);
  });

  it('a second Ctrl-C while it reads the rows exits at once and leaves no temporary copy behind', async () => {
    const dir = folder(
      `invoice_number,customer.name,total\n${Array.from({ length: 600_000 }, (_, i) => `INV-${i},"Customer ${i}",${i % 500}`).join('\n')}\n`,
    );
    const scratch = join(dir, 'tmp');
    mkdirSync(scratch);
    const cli = spawnClient(
      [
        'generate',
        '--url',
        t.baseUrl,
        '--key',
        apiKey,
        '--template',
        templateId,
        '--data',
        join(dir, 'rows.csv'),
        '--zip',
        join(dir, 'all.zip'),
      ],
      { TMPDIR: scratch },
    );
    // Its copy of the rows is being written: interrupt twice, as an impatient user does.
    await until(
      async () => readdirSync(scratch).some((name) => name.startsWith('pressroom-generate-')),
      60_000,
      "the CLI's temporary copy",
    );
    process.kill(cli.pid, 'SIGINT');
    await until(
      async () => cli.stderrTail().includes('Ctrl-C again to quit at once'),
      60_000,
      'the first Ctrl-C to be heard',
    );
    process.kill(cli.pid, 'SIGINT');
    expect(await cli.exited).toBe(130);
    expect(cli.stderrTail()).toMatch(/: stopped\s*$/);
    expect(readdirSync(scratch)).toEqual([]);
    expect((await t.request('GET', '/v1/pdf/batches', { apiKey })).body.batches).toHaveLength(1);
  });
});

/**
 * Issue 49, case 11: links that lie. A server on loopback stands between the command and the service: it
 * passes the API through, and answers each item's link (and the zip's) as the test's plan says — the
 * real PDF, a 3 GiB announcement, an HTML page, an endless zip, one byte per 20 s.
 */
describe('pressroom generate against a server whose links lie (issue 49)', () => {
  type Lie = 'real' | 'announces-3-gib' | 'html' | 'endless-zip' | 'trickle';
  let t: TestApp;
  let apiKey: string;
  let templateId: string;
  let liar: Server;
  let liarUrl: string;
  /** What item i's link answers (real when unset), and the zip's or merged file's. */
  let plan: { items: Record<number, Lie>; result: Lie } = { items: {}, result: 'real' };
  const generate = (args: string[]) =>
    runClient(['generate', '--url', liarUrl, '--key', apiKey, '--template', templateId, ...args]);

  beforeAll(async () => {
    t = await startTestApp('sqlite');
    t.services.startWorkers();
    ({ apiKey } = await t.createAccount({ credits: STARTING_CREDITS }));
    ({ invoice: templateId } = await createTemplates(t, apiKey, { invoice: INVOICE }));
    liar = createServer((req, res) => void answer(req, res).catch(() => res.destroy()));
    await new Promise<void>((resolve) => liar.listen(0, '127.0.0.1', resolve));
    liarUrl = `http://127.0.0.1:${(liar.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    liar?.closeAllConnections();
    liar?.close();
    await t?.close();
  });

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const link = /^\/link\/([\w-]+)\/(.+)$/.exec(req.url ?? '');
    if (link) return lie(link[1] as Lie, decodeURIComponent(link[2]!), res);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers: Record<string, string> = {};
    for (const name of ['x-api-key', 'content-type', 'accept'])
      if (req.headers[name]) headers[name] = String(req.headers[name]);
    const upstream = await fetch(`${t.baseUrl}${req.url}`, {
      method: req.method,
      headers,
      body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
    });
    let body = Buffer.from(await upstream.arrayBuffer());
    if ((upstream.headers.get('content-type') ?? '').includes('application/json') && upstream.ok) {
      const json = JSON.parse(body.toString('utf8'));
      const through = (lie: Lie, url: string) => `${liarUrl}/link/${lie}/${encodeURIComponent(url)}`;
      for (const item of json.items ?? []) if (item.url) item.url = through(plan.items[item.index] ?? 'real', item.url);
      if (json.result?.url) json.result.url = through(plan.result, json.result.url);
      body = Buffer.from(JSON.stringify(json));
    }
    res
      .writeHead(upstream.status, {
        'content-type': upstream.headers.get('content-type') ?? 'application/octet-stream',
      })
      .end(body);
  }

  async function lie(kind: Lie, realUrl: string, res: ServerResponse): Promise<void> {
    if (kind === 'real')
      return void res
        .writeHead(200, { 'content-type': 'application/pdf' })
        .end(Buffer.from(await (await fetch(realUrl)).arrayBuffer()));
    if (kind === 'html')
      return void res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>Access denied</body></html>');
    if (kind === 'trickle') {
      res.writeHead(200, { 'content-type': 'application/pdf' }).write('%PDF-');
      const timer = setInterval(() => res.write('x'), 20_000);
      res.once('close', () => clearInterval(timer));
      return;
    }
    // Up to 64 MiB at most (the machine is shared), then cut off (the 3 GiB announcement) or ended (the endless zip).
    res.writeHead(
      200,
      kind === 'announces-3-gib'
        ? { 'content-type': 'application/pdf', 'content-length': String(3 * 2 ** 30) }
        : { 'content-type': 'application/zip' },
    );
    const block = Buffer.alloc(1 << 20);
    Buffer.from(kind === 'announces-3-gib' ? '%PDF-1.7\n' : 'PK\x03\x04', 'latin1').copy(block);
    for (let sent = 0; sent < 64 && !res.destroyed; sent++) {
      if (!res.write(block))
        await new Promise((resolve) => {
          res.once('drain', resolve);
          res.once('close', resolve);
        });
    }
    if (kind === 'announces-3-gib') res.destroy();
    else res.end();
  }

  /** A folder's entries, temporary files included. */
  const entries = (dir: string) => readdirSync(dir).sort();

  it('a 3 GiB announcement and an HTML page are not delivered: listed with the reason, exit code 1, nothing of them kept; the honest row is', async () => {
    plan = { items: { 1: 'announces-3-gib', 2: 'html' }, result: 'real' };
    const dir = folder(CSV);
    const out = join(dir, 'pdfs');
    const run = await generate(['--data', join(dir, 'rows.csv'), '--out', out, '--filename', '{{ invoice_number }}']);
    expect(run.code, run.stderr).toBe(1);
    expect(entries(out)).toEqual(['INV-001.pdf']);
    expectRowText(pdfText(readFileSync(join(out, 'INV-001.pdf'))), ROWS[0]!);
    expect(run.stderr).toMatch(
      /INV-002\.pdf: download failed: INV-002\.pdf: the server announced 3221225472 bytes, more than the 1024 MiB a file may have/,
    );
    expect(run.stderr).toMatch(
      /INV-003\.pdf: download failed: INV-003\.pdf: the file is not a PDF \(it starts with "<html"\); nothing was kept/,
    );
    expect(run.stdout).toContain(`delivered 1 of 3 rows to ${out}`);
    expect(run.stderr).toContain('2 of 3 rows not delivered');
  });

  it('--zip: a result past --max-file-mb is not delivered and not kept; exit code 1', async () => {
    plan = { items: {}, result: 'endless-zip' };
    const dir = folder(CSV);
    const run = await generate(['--data', join(dir, 'rows.csv'), '--zip', join(dir, 'all.zip'), '--max-file-mb', '2']);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toContain(
      'could not download the result: all.zip: the file is larger than the 2 MiB a file may have (--max-file-mb); nothing was kept',
    );
    expect(run.stdout).toContain(`delivered 0 of 3 rows to ${join(dir, 'all.zip')}`);
    expect(entries(dir)).toEqual(['rows.csv']);
  });

  it('a server that sends a byte per 20 s: the row fails once it has sent nothing for a while, its partial file removed; exit code 1', async () => {
    plan = { items: { 0: 'trickle' }, result: 'real' };
    const dir = folder(`invoice_number,customer.name,total\nINV-101,"Ada Lovelace",1\n`);
    const out = join(dir, 'pdfs');
    const run = await generate(['--data', join(dir, 'rows.csv'), '--out', out]);
    expect(run.code, run.stderr).toBe(1);
    expect(run.stderr).toMatch(
      /document-1\.pdf: download failed: document-1\.pdf: the server sent nothing for \d+ s; nothing was kept/,
    );
    expect(entries(out)).toEqual([]);
  }, 240_000);

  it('Ctrl-C twice while a download trickles: exit code 130 and no partial file left', async () => {
    plan = { items: { 0: 'trickle' }, result: 'real' };
    const dir = folder(`invoice_number,customer.name,total\nINV-201,"Grace Hopper",1\n`);
    const out = join(dir, 'pdfs');
    const cli = spawnClient([
      'generate',
      '--url',
      liarUrl,
      '--key',
      apiKey,
      '--template',
      templateId,
      '--data',
      join(dir, 'rows.csv'),
      '--out',
      out,
    ]);
    await until(
      async () => existsSync(out) && entries(out).some((name) => name.endsWith('.part')),
      120_000,
      "the download's partial file",
    );
    process.kill(cli.pid, 'SIGINT');
    await until(async () => cli.stderrTail().includes('Ctrl-C again'), 60_000, 'the first Ctrl-C to be heard');
    process.kill(cli.pid, 'SIGINT');
    expect(await cli.exited).toBe(130);
    expect(entries(out)).toEqual([]);
  });
});
