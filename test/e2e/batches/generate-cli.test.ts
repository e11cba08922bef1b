/**
 * `pressroom generate` end to end, as a user runs it: the built CLI (`node bin/pressroom.js`) as a child
 * process, its environment holding no database or secret, against a real running service on loopback
 * (real Chromium; SQLite only: the CLI is a client of the API, whose storage batches.test.ts checks on both
 * databases). What is checked is what the user sees: the files it wrote and
 * their text (pdftotext), the zip's entries, what it printed, its exit code, and the account's credits.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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
