/**
 * The studio's Batches screen (issue 40) end to end: the real service in-process (SQLite) with its job
 * workers, the built web app, Debian's Chromium driven by playwright-core, one studio session. A CSV is
 * dropped, its columns matched to the template's fields (one changed by hand), row 1 previewed; a bad
 * cell is refused by row and column with nothing charged; a waiting batch is cancelled and refunded;
 * a batch runs to the end and its zip holds each row's PDF; a row the template fails on is listed with
 * its error while the merged PDF holds the others; a batch of a published version renders that version,
 * not the draft that moved on. Asserts what a user gets: the screen, the downloaded
 * files (pdftotext), the credits.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Download, Page } from 'playwright-core';
import { readRows } from '../../../src/batches/batch-rows.js';
import { ValidationError } from '../../../src/shared/errors.js';
import type { FieldDefinition } from '../../../src/templates/field-inference.js';
import {
  IGNORE,
  matchColumns,
  readCsv,
  rewriteCsv,
  rowData,
  uploadPlace,
  type CsvTable,
} from '../../../studio/src/lib/csv-rows.js';
import { describeIssue } from '../../../studio/src/lib/messages.js';
import { pdfText } from '../../support/documents/pdf-tools.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { unzip } from '../../support/documents/zip-entries.js';
import {
  DESKTOP,
  PHONE,
  capturePreviews,
  ensureStudioBuild,
  hasNoHorizontalOverflow,
  launchBrowser,
  layoutSettled,
  openStudio,
  screenshot,
  signIn,
  type StudioPage,
} from './studio-browser.js';

// Built in the browser by page.evaluateHandle; the test build has no DOM lib.
declare const DataTransfer: any;

// Strict: a variable the data lacks fails the document. Only the row named "Fail Me" prints one.
const CERTIFICATE = `<h1>Certificate for {{ name }}</h1><p>Hours: {{ hours }}</p>
{% if name == "Fail Me" %}<p>{{ not_in_the_data }}</p>{% endif %}`;
const FIELDS = [
  { key: 'name', label: 'Name', type: 'string', required: true },
  { key: 'hours', label: 'Hours', type: 'number', required: true },
];
// "Full name" matches no field by name: it is chosen by hand. "Notes" is ignored.
const ROWS_CSV =
  'Full name,hours,Notes,_filename\nAda Lovelace,12.5,first,ada\n"Hopper, Grace",8,second,grace\nAlan Turing,3,third,alan\n';
const BAD_CSV = 'name,hours\nGood,1\n\nBad,twelve\n';
const FAILING_CSV = 'name,hours,_filename\nOne,1,one\nFail Me,2,bad\nThree,3,three\n';
// Version 1 needs a name; the draft since also requires a title, which the CSV has no column for.
const LETTER_V1 = {
  html: '<p>First edition for {{ name }}</p>',
  fields: [{ key: 'name', label: 'Name', type: 'string', required: true }],
};
const LETTER_DRAFT = {
  html: '<h1>{{ title }}</h1><p>Second edition for {{ name }}</p>',
  fields: [...LETTER_V1.fields, { key: 'title', label: 'Title', type: 'string', required: true }],
};
const LETTER_CSV = 'name,_filename\nAda,ada\nGrace,grace\n';

/** Drops a CSV file on the drop zone as a user dragging it from the desktop would. */
async function dropCsv(page: Page, name: string, text: string): Promise<void> {
  const dataTransfer = await page.evaluateHandle(
    ({ name, text }) => {
      const dt = new DataTransfer();
      dt.items.add(new File([text], name, { type: 'text/csv' }));
      return dt;
    },
    { name, text },
  );
  await page.getByTestId('csv-drop').dispatchEvent('drop', { dataTransfer });
}

/** Runs `action` and returns the bytes of the download it starts. */
async function downloaded(page: Page, action: () => Promise<unknown>): Promise<Buffer> {
  const [download] = (await Promise.all([page.waitForEvent('download', { timeout: 120_000 }), action()])) as [
    Download,
    unknown,
  ];
  return readFile((await download.path())!);
}

describe("the Batches screen's CSV, without a browser", () => {
  const field = (key: string, label: string, type: FieldDefinition['type'], required = false): FieldDefinition => ({
    key,
    label,
    type,
    required,
    helpText: null,
    spec: null,
  });
  const fields = [
    field('customer_name', 'Customer name', 'string', true),
    field('total', 'Amount', 'number', true),
    field('paid', 'Paid', 'boolean'),
    field('lines', 'Lines', 'array'),
  ];

  it('matches a column by exact key first, then by key or label read loosely, then the file-name column; each target once', () => {
    expect(matchColumns(['Customer Name', 'TOTAL', 'File name', 'extra', 'total', 'amount'], fields)).toEqual([
      'customer_name',
      IGNORE,
      '_filename',
      IGNORE,
      'total',
      IGNORE,
    ]);
    expect(matchColumns(['Amount', ' paid ', '_filename', 'filename'], fields)).toEqual([
      'total',
      'paid',
      '_filename',
      IGNORE,
    ]);
  });

  it("re-writes a semicolon file with the chosen names, which the service reads as the studio does, and names a refused cell by the file's row, line and column", async () => {
    const text =
      '\ufeffKunde;Betrag;Bezahlt;Notiz;Posten\n"Ada; ""the first""";12,5;ja;x;[1]\n\n"Grace\nHopper";8;yes;y;[]\n';
    const table = (await readCsv('export.csv', text)) as CsvTable;
    expect(table).toMatchObject({
      delimiter: ';',
      header: ['Kunde', 'Betrag', 'Bezahlt', 'Notiz', 'Posten'],
      lines: [2, 5],
    });
    const targets = ['customer_name', 'total', 'paid', IGNORE, 'lines'];
    // The cells as the service types them: "12,5" is no number, "ja" no boolean.
    expect(rowData(table, targets, fields, 1)).toEqual({
      data: { customer_name: 'Grace\nHopper', total: 8, paid: true, lines: [] },
      filename: null,
      faults: [],
    });
    expect(rowData(table, targets, fields, 0).faults).toEqual([
      '“Betrag”: Expected a number, got "12,5"',
      '“Bezahlt”: Expected true or false, got "ja"',
    ]);

    const upload = rewriteCsv(table, targets);
    expect(upload.text.split('\n')[0]).toBe('"customer_name","total","paid","lines"');
    const refused = await readRows({ kind: 'csv', field: 'rows', text: upload.text }, { fields, maxItems: 10 }).catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(ValidationError);
    const place = uploadPlace(table, targets, upload, fields);
    expect((refused as ValidationError).issues.map((issue) => describeIssue(issue, place))).toEqual([
      'Row 1 (line 2 of export.csv), column “Betrag” (Amount): Expected a number, got "12,5" (number_type)',
      'Row 1 (line 2 of export.csv), column “Bezahlt” (Paid): Expected true or false, got "ja"',
    ]);

    // Fixed, every row reads on the service as the studio's preview reads it.
    table.rows[0]![1] = '12.5';
    table.rows[0]![2] = 'true';
    const rows = await readRows(
      { kind: 'csv', field: 'rows', text: rewriteCsv(table, targets).text },
      { fields, maxItems: 10 },
    );
    const items: Record<string, unknown>[] = [];
    for await (const chunk of rows.spool.chunks(10))
      items.push(...chunk.map((item) => JSON.parse(item.data) as Record<string, unknown>));
    await rows.spool.remove();
    expect(items).toEqual([rowData(table, targets, fields, 0).data, rowData(table, targets, fields, 1).data]);
    expect(items[0]).toEqual({ customer_name: 'Ada; "the first"', total: 12.5, paid: true, lines: [1] });
  });

  it('says why a file cannot be read', async () => {
    expect(await readCsv('short.csv', 'a,b\n1,2\n3\n')).toMatch(/^short\.csv is not a readable CSV file: .*line 3/);
    expect(await readCsv('header.csv', 'a,b\n')).toBe(
      'header.csv has a header row and no rows: each row after the header is one document.',
    );
  });
});

// Generous timeouts: the machine's two cores are shared with other Chromium work.
describe('studio Batches screen in Chromium', { timeout: 240_000 }, () => {
  let t: TestApp;
  let browser: Browser;
  let studio: StudioPage;
  let page: Page;
  let alice: { accountId: string; apiKey: string };

  const credits = async () => (await t.request('GET', '/v1/account', { apiKey: alice.apiKey })).body.credits as number;
  const batches = async () =>
    (await t.request('GET', '/v1/pdf/batches?limit=100', { apiKey: alice.apiKey })).body.batches as {
      batch_id: string;
      status: string;
    }[];
  const column = (name: string) => page.getByLabel(`Column “${name}” fills`);
  const watch = () => page.getByTestId('batch-watch');
  const start = () => page.getByRole('button', { name: /^Start \d+ documents?/ });
  /** Clicks Start (twice at once with `double`) and waits for the new batch's live view; returns its id. */
  const startBatch = async (double = false) => {
    const before = page.url();
    await (double ? start().dblclick() : start().click());
    await page.waitForURL((url) => url.toString() !== before && /\/batches\/bat_/.test(url.pathname));
    const id = decodeURIComponent(page.url().split('/').pop()!);
    await expect.poll(() => watch().locator('h2 code').innerText()).toBe(id);
    return id;
  };
  const statusOf = () => watch().getAttribute('data-status');

  beforeAll(async () => {
    ensureStudioBuild();
    // The workers start later: first a batch must wait, so that the cancel finds it not started.
    t = await startTestApp('sqlite', { PRESSROOM_JOB_POLL_MS: '100' });
    alice = await t.createAccount({ credits: 20, email: 'alice@example.com', plan: 'pro' });
    const created = await t.request('POST', '/v1/templates', {
      apiKey: alice.apiKey,
      body: { name: 'Certificate', html: CERTIFICATE, fields: FIELDS, strict: true },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    [browser] = await Promise.all([launchBrowser(), t.services.renderer.warmUp()]);
    studio = await openStudio(browser, t.baseUrl);
    page = studio.page;
    await signIn(page, alice.apiKey);
    await page.getByRole('link', { name: 'Batches' }).click();
    await page.waitForURL(/\/batches$/);
    await page.getByLabel('Template').selectOption({ label: 'Certificate' });
  });

  afterAll(async () => {
    await studio?.context.close().catch(() => undefined);
    await browser?.close();
    await t?.close();
  });

  it('refuses a bad cell by row and column as the file has them, charging nothing', async () => {
    const before = await credits();
    await dropCsv(page, 'bad.csv', BAD_CSV);
    await expect.poll(() => page.getByTestId('csv-summary').innerText()).toBe('bad.csv: 2 rows, 2 columns.');
    await start().click();
    // The blank line 3 is skipped: the bad row is row 2, on line 4 of the file.
    await expect
      .poll(() => page.getByTestId('batch-refusal').innerText())
      .toContain('Row 2 (line 4 of bad.csv), column “hours” (Hours): Expected a number, got "twelve"');
    expect(await page.getByTestId('batch-refusal').innerText()).toContain('Nothing was charged');
    expect(await credits()).toBe(before);
    expect(await batches()).toEqual([]);
  });

  it('matches dropped columns to the fields by name, shows a required field no column fills, and previews row 1', async () => {
    await dropCsv(page, 'certificates.csv', ROWS_CSV);
    await expect.poll(() => page.getByTestId('csv-summary').innerText()).toBe('certificates.csv: 3 rows, 4 columns.');
    await expect.poll(() => column('hours').inputValue()).toBe('hours');
    expect(await column('_filename').inputValue()).toBe('_filename');
    expect(await column('Full name').inputValue()).toBe('');
    expect(await column('Notes').inputValue()).toBe('');
    expect(await page.getByTestId('unmatched-required').innerText()).toContain('Name (name)');
    expect(await start().isDisabled()).toBe(true);

    await column('Full name').selectOption('name');
    await expect.poll(() => page.getByTestId('unmatched-required').count()).toBe(0);
    expect(await start().innerText()).toBe('Start 3 documents (3 credits)');

    const previews = await capturePreviews(page);
    const next = previews.next();
    await page.getByRole('button', { name: 'Preview row 1 (free)' }).click();
    const preview = await next;
    expect(pdfText(preview)).toMatch(/Certificate for Ada Lovelace[\s\S]*Hours: 12.5/);
    await expect.poll(() => page.getByTestId('row-preview-status').getAttribute('data-status')).toBe('ready');
    await page.getByRole('radio', { name: /One zip/ }).check();
    await page.getByLabel('File name (optional, without .zip)').fill('certificates');
    await screenshot(page, 'batches-columns', { fullPage: true });
  });

  /** After a start the form shows its batch, not Start; "New batch" brings the form back without the file. */
  const newBatch = async () => {
    await page.getByTestId('batch-started').getByRole('button', { name: 'New batch' }).click();
    await page.getByRole('heading', { name: 'New batch' }).waitFor();
  };

  it('cancels a batch that has not started: every row refunded', async () => {
    const before = await credits();
    // A double click on Start starts one batch, charged once (issue 50: the form stayed armed).
    const id = await startBatch(true);
    await page.getByTestId('batch-started').waitFor();
    expect(await start().count()).toBe(0);
    expect(await page.getByTestId('batch-started').innerText()).toContain(
      '3 documents from certificates.csv are being made',
    );
    expect((await batches()).map((b) => b.batch_id)).toEqual([id]);
    await page.setViewportSize(PHONE);
    await layoutSettled(page);
    expect(await hasNoHorizontalOverflow(page)).toMatchObject({ ok: true });
    await screenshot(page, 'phone-batch-started', { fullPage: true });
    await page.setViewportSize(DESKTOP);
    // No worker runs yet: the batch waits, with no rate to tell the time left from.
    await expect
      .poll(() => page.getByTestId('batch-counts').innerText())
      .toBe('0 of 3 made · 0 failed · 0 cancelled · time left: known after two documents');
    expect(await statusOf()).toBe('pending');
    expect(await credits()).toBe(before - 3);
    await page.getByRole('button', { name: 'Cancel batch' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel batch' }).click();
    await expect.poll(statusOf).toBe('cancelled');
    expect(await page.getByTestId('batch-counts').innerText()).toContain('0 of 3 made · 0 failed · 3 cancelled');
    expect(await page.getByRole('button', { name: 'Cancel batch' }).count()).toBe(0);
    expect(await credits()).toBe(before);
    expect((await t.request('GET', `/v1/pdf/batches/${id}`, { apiKey: alice.apiKey })).body).toMatchObject({
      status: 'cancelled',
      cancelled: 3,
    });
  });

  it('runs a batch to the end live and downloads the zip of its three PDFs', async () => {
    t.services.startWorkers();
    const before = await credits();
    await page.getByRole('link', { name: 'Batches' }).click();
    await page.waitForURL(/\/batches$/);
    // Still disarmed: the same file again takes a deliberate new batch, which keeps the template and output.
    expect(await start().count()).toBe(0);
    await newBatch();
    expect(await page.getByTestId('csv-summary').count()).toBe(0);
    expect(await page.getByRole('radio', { name: /One zip/ }).isChecked()).toBe(true);
    await dropCsv(page, 'certificates.csv', ROWS_CSV);
    await column('Full name').selectOption('name');
    await page.getByLabel('File name (optional, without .zip)').fill('certificates');
    await startBatch();
    await expect.poll(statusOf, { timeout: 120_000 }).toBe('completed');
    expect(await page.getByTestId('batch-counts').innerText()).toContain('3 of 3 made · 0 failed · 0 cancelled');
    expect(await page.locator('progress.batch-progress').evaluate((el: any) => [el.value, el.max])).toEqual([3, 3]);
    await screenshot(page, 'batches-completed', { fullPage: true });
    expect(await page.getByTestId('batch-download').innerText()).toBe('certificates.zip');
    const entries = unzip(await downloaded(page, () => page.getByTestId('batch-download').click()));
    expect([...entries.keys()].sort()).toEqual(['ada.pdf', 'alan.pdf', 'grace.pdf']);
    expect(pdfText(entries.get('ada.pdf')!)).toMatch(/Certificate for Ada Lovelace[\s\S]*Hours: 12.5/);
    expect(pdfText(entries.get('grace.pdf')!)).toMatch(/Certificate for Hopper, Grace[\s\S]*Hours: 8/);
    expect(pdfText(entries.get('alan.pdf')!)).toMatch(/Certificate for Alan Turing[\s\S]*Hours: 3/);
    // The preview was free; the three documents cost one credit each.
    await expect.poll(credits).toBe(before - 3);
    await expect.poll(() => page.getByTestId('credits').innerText()).toContain(String(before - 3));
  });

  it('lists a row the template fails on with its error, refunded; the merged PDF holds the others', async () => {
    const before = await credits();
    await newBatch();
    await dropCsv(page, 'mixed.csv', FAILING_CSV);
    await expect.poll(() => page.getByTestId('csv-summary').innerText()).toBe('mixed.csv: 3 rows, 3 columns.');
    await page.getByRole('radio', { name: /One merged PDF/ }).check();
    await page.getByLabel('File name (optional, without .pdf)').fill('mixed');
    await startBatch();
    await expect.poll(statusOf, { timeout: 120_000 }).toBe('completed_with_errors');
    expect(await page.getByTestId('batch-counts').innerText()).toContain('2 of 3 made · 1 failed');
    const failed = page.getByTestId('failed-rows').locator('tbody tr');
    await expect.poll(() => failed.count()).toBe(1);
    expect(await failed.locator('td').allInnerTexts()).toEqual([
      '2',
      'bad.pdf',
      expect.stringMatching(/not_in_the_data[\s\S]*\(TEMPLATE_RENDER_ERROR\)$/),
    ]);
    const merged = pdfText(await downloaded(page, () => page.getByTestId('batch-download').click()));
    expect(merged).toMatch(/Certificate for One[\s\S]*Certificate for Three/);
    expect(merged).not.toContain('Fail Me');
    await expect.poll(credits).toBe(before - 2);

    // The recent batches: all three, newest first, this one with its failure.
    const recent = page.getByTestId('recent-batches').locator('tbody tr');
    await expect.poll(() => recent.count()).toBe(3);
    await expect
      .poll(() => recent.locator('td[data-label="Status"]').allInnerTexts())
      .toEqual(['completed with errors', 'completed', 'cancelled']);
    expect(await recent.first().locator('td[data-label="Documents"]').innerText()).toBe('2/3, 1 failed');
    expect(studio.problems).toEqual([]);
  });

  it("renders the published version chosen, with that version's fields, not the draft that moved on", async () => {
    t.services.startWorkers();
    const id = (
      await t.request('POST', '/v1/templates', { apiKey: alice.apiKey, body: { name: 'Letter', ...LETTER_V1 } })
    ).body.id as string;
    expect(
      (await t.request('POST', `/v1/templates/${id}/versions`, { apiKey: alice.apiKey, body: { tag: 'v1' } })).status,
    ).toBe(200);
    expect((await t.request('PUT', `/v1/templates/${id}`, { apiKey: alice.apiKey, body: LETTER_DRAFT })).status).toBe(
      200,
    );
    // The template list is read when the screen opens: open it again to see Letter.
    await page.goto('/batches');
    await page.getByLabel('Template').selectOption({ label: 'Letter' });
    expect(await page.getByLabel('Version').inputValue()).toBe('');
    await dropCsv(page, 'letters.csv', LETTER_CSV);
    // The draft requires a title no column fills; version 1 does not.
    await expect.poll(() => page.getByTestId('unmatched-required').innerText()).toContain('Title (title)');
    await page.getByLabel('Version').selectOption({ label: 'Version 1 · v1' });
    await expect.poll(() => page.getByTestId('unmatched-required').count()).toBe(0);
    expect(await column('name').inputValue()).toBe('name');
    const previews = await capturePreviews(page);
    const preview = previews.next(60_000, (body) => body.version === 1);
    await page.getByRole('button', { name: 'Preview row 1 (free)' }).click();
    expect(pdfText(await preview)).toContain('First edition for Ada');

    await page.getByRole('radio', { name: /A link per document/ }).check();
    const batchId = await startBatch();
    await expect.poll(statusOf, { timeout: 120_000 }).toBe('completed');
    await expect.poll(() => watch().innerText()).toContain(`Letter ${id} (version 1 (v1))`);
    await expect
      .poll(() =>
        page.getByTestId('recent-batches').locator('tbody tr').first().locator('td[data-label="Version"]').innerText(),
      )
      .toBe('version 1 (v1)');
    expect((await t.request('GET', `/v1/pdf/batches/${batchId}`, { apiKey: alice.apiKey })).body.version).toEqual({
      number: 1,
      tag: 'v1',
    });
    const items = (
      await t.request('GET', `/v1/pdf/batches/${batchId}/items?status=completed`, { apiKey: alice.apiKey })
    ).body.items as { filename: string; url: string }[];
    const textOf = async (url: string) =>
      pdfText((await t.request('GET', new URL(url).pathname + new URL(url).search)).bytes);
    const texts = Object.fromEntries(
      await Promise.all(items.map(async (item) => [item.filename, await textOf(item.url)])),
    );
    expect(Object.keys(texts).sort()).toEqual(['ada.pdf', 'grace.pdf']);
    expect(texts['ada.pdf']).toContain('First edition for Ada');
    expect(texts['grace.pdf']).toContain('First edition for Grace');
    expect(Object.values(texts).join('\n')).not.toContain('Second edition');
    expect(studio.problems).toEqual([]);
  });
});
