/**
 * Tagged or not, and compacted, through the API with real Chromium, on SQLite and PostgreSQL: a
 * template's `page.tagged`, a create request's `tagged` over it (sync and async), the file compacted
 * (object streams, qpdf finds it sound) with tags and outline kept; and a synchronous request whose
 * document is too long to print in time, refused early with a pointer to create-async and no charge,
 * while create-async renders it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENT_DIALECTS } from '../../support/databases.js';
import { pdfInfo, pdfOutlineTitles, pdfPages, pdfText } from '../../support/documents/pdf-tools.js';
import { completedJobPdf, createTemplates, startTestApp, type TestApp } from '../../support/test-app.js';

const SHORT = `<html><head><title>Statement {{ n }}</title><style>@page { size: A4; margin: 15mm }</style></head><body>
<h1>Statement {{ n }}</h1><h2>Balance</h2><p>Balance due 45.50 EUR. <a href="https://example.com/pay">Pay online</a></p></body></html>`;
/** About `n` A4 pages of blocks: long enough to be refused with the test's per-page cost, cheap to print. */
const LONG = `<html><head><style>@page { size: A4; margin: 0 } div { height: 250mm }</style></head><body>
{% for i in range(n) %}<div>Section {{ i + 1 }}</div>{% endfor %}</body></html>`;

describe.each(DOCUMENT_DIALECTS)('tagged or untagged, compacted PDFs on %s', (dialect) => {
  let t: TestApp;
  let account: { accountId: string; apiKey: string };
  let ids: Record<'tagged' | 'untagged' | 'long', string>;

  const balance = async () =>
    (await t.request('GET', '/v1/account', { apiKey: account.apiKey })).body.credits as number;
  const fileCount = async () =>
    Number(
      (
        await t.services.database.db
          .selectFrom('files')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const createBinary = async (templateId: string, extra: Record<string, unknown> = {}): Promise<Buffer> => {
    const res = await t.request('POST', '/v1/pdf/create', {
      apiKey: account.apiKey,
      body: { template_id: templateId, data: { n: 7 }, export_type: 'binary', ...extra },
    });
    expect(res.status, res.bytes.toString('utf8', 0, 300)).toBe(200);
    return res.bytes;
  };
  const runJob = async (body: Record<string, unknown>): Promise<Buffer> => {
    const res = await t.request('POST', '/v1/pdf/create-async', { apiKey: account.apiKey, body });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return completedJobPdf(t, account.apiKey, res.body.job_id, 240_000);
  };

  beforeAll(async () => {
    // A small deadline and a high starting figure per page, until the installation has printed a long
    // document itself: 1 page is estimated at 2 s, the long document's ~26 pages at ~52 s.
    t = await startTestApp(
      dialect,
      { PRESSROOM_JOB_POLL_MS: '100', PRESSROOM_RENDER_TIMEOUT_MS: '20000' },
      { tuning: { rendering: { printMsPerPage: { tagged: 2000, untagged: 2000 } } } },
    );
    t.services.startWorkers();
    account = await t.createAccount({ credits: 30, plan: 'enterprise' });
    ids = await createTemplates(t, account.apiKey, {
      tagged: { name: 'Statement', html: SHORT },
      untagged: { name: 'Fast statement', html: SHORT, page: { format: 'A4', tagged: false } },
      long: { name: 'Long', html: LONG },
    });
  }, 120_000);
  afterAll(async () => t?.close());

  it('keeps page.tagged on the template', async () => {
    const res = await t.request('GET', `/v1/templates/${ids.untagged}`, { apiKey: account.apiKey });
    expect(res.body.page).toMatchObject({ tagged: false });
  });

  it('prints tagged with an outline by default, compacted, and untagged when the request says tagged: false', async () => {
    const tagged = await createBinary(ids.tagged);
    expect(pdfInfo(tagged)).toMatchObject({ Tagged: 'yes', 'PDF version': '1.5', Title: 'Statement 7' });
    expect(pdfOutlineTitles(tagged)).toEqual(['Statement 7', 'Balance']);
    expect(pdfText(tagged)).toContain('Balance due 45.50 EUR');

    const untagged = await createBinary(ids.tagged, { tagged: false });
    expect(pdfInfo(untagged)).toMatchObject({ Tagged: 'no', Title: 'Statement 7' });
    expect(pdfOutlineTitles(untagged)).toEqual([]);
    expect(pdfText(untagged)).toBe(pdfText(tagged));
  });

  it("follows the template's page.tagged: false, and a request's tagged: true over it", async () => {
    expect(pdfInfo(await createBinary(ids.untagged)).Tagged).toBe('no');
    const tagged = await createBinary(ids.untagged, { tagged: true });
    expect(pdfInfo(tagged).Tagged).toBe('yes');
    expect(pdfOutlineTitles(tagged)).toContain('Balance');
  });

  it('gives a PDF/A-2b file untagged when asked (level b does not require tags)', async () => {
    const pdf = await createBinary(ids.tagged, { tagged: false, pdf_variant: 'pdf/a-2b' });
    expect(pdfInfo(pdf).Tagged).toBe('no');
    expect(pdfText(pdf)).toContain('Balance due 45.50 EUR');
  });

  it('records tagged: false on a job and prints it so', async () => {
    const pdf = await runJob({ template_id: ids.tagged, data: { n: 8 }, tagged: false });
    expect(pdfInfo(pdf)).toMatchObject({ Tagged: 'no', Title: 'Statement 8' });
    const row = await t.services.database.db
      .selectFrom('jobs')
      .select('options')
      .where('account_id', '=', account.accountId)
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow();
    expect(JSON.parse(row.options as string)).toMatchObject({ tagged: false });
  }, 300_000);

  it('refuses a synchronous document too long to print in time, early, pointing to create-async, and charges nothing', async () => {
    const [credits, files] = [await balance(), await fileCount()];
    const res = await t.request('POST', '/v1/pdf/create', {
      apiKey: account.apiKey,
      body: { template_id: ids.long, data: { n: 30 }, export_type: 'binary' },
    });
    expect(res.status, res.bytes.toString('utf8', 0, 500)).toBe(422);
    expect(res.body).toMatchObject({
      error: 'DOCUMENT_TOO_LONG_FOR_SYNC',
      message: expect.stringContaining('/v1/pdf/create-async'),
    });
    expect(res.body.message).toMatch(/about \d+ pages/);
    expect(await balance()).toBe(credits);
    expect(await fileCount()).toBe(files);
  });

  it('renders that document through create-async', async () => {
    const pdf = await runJob({ template_id: ids.long, data: { n: 30 } });
    expect(pdfPages(pdf)).toBeGreaterThanOrEqual(25); // 30 blocks of 250 mm on 297 mm pages
    expect(pdfText(pdf)).toContain('Section 30');
  }, 300_000);

  it('prints that document synchronously once this installation has printed it: the estimate is its own speed', async () => {
    const credits = await balance();
    const pdf = await createBinary(ids.long, { data: { n: 30 } });
    expect(pdfPages(pdf)).toBeGreaterThanOrEqual(25);
    expect(pdfText(pdf)).toContain('Section 30');
    expect(await balance()).toBe(credits - 1);
  });
});
