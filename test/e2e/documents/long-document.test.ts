/**
 * The long document of issue 17: the peers' 33-page report with its data ×10 (15,000 ledger rows,
 * ~315 pages) renders through create-async. The async render deadline is raised to 15 min here: on a
 * 2-core machine shared with the suite's drills this render can take longer than the default 300 s,
 * and the deadline is a guard, not what this test is about (no test asserts wall-clock time). Its ledger is written as tables of 500 rows
 * (`rows | batch(500)`, docs/long-documents.md "Long tables"): as one table of 15,000 rows Chromium's print
 * layout needs ~9 GB in the renderer, split ~3.7 GB (bench/costs/print-layout-cost.ts).
 *
 * The synchronous door's early refusal is tested in tagged-pdf.test.ts: on a loaded machine this
 * document's evaluation and layout alone can pass the 30 s deadline before the estimate runs, and then
 * the answer is RENDER_TIMEOUT. One long test on SQLite only: it exercises the renderer and the job
 * path, which the other e2e files run on both databases; a second database would double the most
 * expensive render of the suite and test nothing more. Printed untagged to keep it as cheap as is
 * honest (tagged, the same document is measured by `npm run bench -- --suite issue17`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfInfo, pdfPageText, pdfPages, pdfText } from '../../support/documents/pdf-tools.js';
import { splitLedger } from '../../support/documents/split-ledger.js';
import { completedJobPdf, startTestApp, type TestApp } from '../../support/test-app.js';

const FIXTURE = new URL('../../fixtures/report/', import.meta.url);
const report = JSON.parse(readFileSync(new URL('report.json', FIXTURE), 'utf8')) as {
  rows: { id?: string }[];
  [key: string]: unknown;
};
/** The fixture's data ×10: the ledger's rows ten times over. */
const LONG_DATA = { ...report, rows: Array.from({ length: 10 }, () => report.rows).flat() };

describe('a 330-page report', () => {
  let t: TestApp;
  let account: { accountId: string; apiKey: string };
  let templateId: string;

  beforeAll(async () => {
    // Evaluating 15,000 rows in the sandbox takes a few seconds on a busy machine: the template limit is raised, the render deadlines are the defaults.
    // Even split, the print layout of ~315 pages needs ~3.7 GB in the renderer: the bound is set to 6 GB, what the
    // default gives on a 24 GiB, 2-core machine (half the memory over the slots), so the test does not depend on the machine.
    t = await startTestApp('sqlite', {
      PRESSROOM_JOB_POLL_MS: '200',
      PRESSROOM_TEMPLATE_TIMEOUT_MS: '60000',
      PRESSROOM_RENDERER_MEMORY_MB: '6144',
      PRESSROOM_ASYNC_RENDER_TIMEOUT_MS: '900000',
    });
    t.services.startWorkers();
    account = await t.createAccount({ credits: 10, plan: 'enterprise' });
    const res = await t.request('POST', '/v1/templates', {
      apiKey: account.apiKey,
      body: { name: 'Long report', html: splitLedger(readFileSync(new URL('report.html', FIXTURE), 'utf8'), 500) },
    });
    expect(res.status).toBe(201);
    templateId = res.body.id;
  }, 120_000);
  afterAll(async () => t?.close());

  it('renders through create-async', async () => {
    const res = await t.request('POST', '/v1/pdf/create-async', {
      apiKey: account.apiKey,
      body: { template_id: templateId, data: LONG_DATA, tagged: false },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const pdf = await completedJobPdf(t, account.apiKey, res.body.job_id, 1_000_000);
    const pages = pdfPages(pdf);
    expect(pages).toBeGreaterThanOrEqual(300);
    expect(pdfInfo(pdf)).toMatchObject({ Tagged: 'no', 'PDF version': '1.5' });
    // The last page still carries the ledger and its running page number ("Page n of N").
    const last = pdfPageText(pdf, pages);
    expect(last).toContain(`${pages}`);
    expect(pdfPageText(pdf, Math.floor(pages / 2))).toMatch(/\d/);
    // Every row is there, numbered on across the tables: the ledger's last row is row 15,000.
    expect(pdfText(pdf)).toMatch(/\b15000\b/);
    // At ~4 MB it went from Chromium to storage through a spool file (SPOOL_ABOVE_BYTES, 1 MiB
    // by default), compacted there (PDF 1.5 above), and the file is gone.
    const metrics = (await t.request('GET', '/metrics')).body as string;
    expect(Number(/^pressroom_pdf_spooled_total (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1);
    expect(readdirSync(t.config.storage.spoolDir)).toEqual([]);
  }, 1_100_000);
});
