/**
 * Spooled PDFs (issue 17): with the spool threshold tuned to 0 every PDF goes through a file in
 * `<dataDir>/spool` between printing and delivery — the path a long document takes by default — with
 * real Chromium, a real S3-compatible server on loopback, on SQLite and PostgreSQL. Each way out
 * (download link, bytes, job, the customer's bucket) gives the same document: its text, Pressroom's
 * Title, compacted (object streams: PDF 1.5) with its tags, outline and link kept; a failed upload is
 * refunded; and no spool file outlives its document.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENT_DIALECTS } from '../../support/databases.js';
import { pdfExpandedBytes, pdfInfo, pdfOutlineTitles, pdfText, pdfTool } from '../../support/documents/pdf-tools.js';
import { startS3Server, type S3Server } from '../../support/s3-server.js';
import { completedJobPdf, createTemplates, startTestApp, type TestApp } from '../../support/test-app.js';

const ACCESS_KEY = 'pressroom-spool-key';
const SECRET = 'pressroom-spool-secret-0123456789ABCDEF';
const STATEMENT = `<html><head><title>Statement {{ n }}</title><style>@page { size: A4; margin: 15mm }</style></head><body>
<h1>Statement {{ n }}</h1><h2>Balance</h2><p>Balance due {{ due }} EUR. <a href="https://example.com/pay">Pay online</a></p></body></html>`;

describe.each(DOCUMENT_DIALECTS)('spooled PDFs on %s', (dialect) => {
  let t: TestApp;
  let s3: S3Server;
  let account: { accountId: string; apiKey: string };
  let ids: Record<'statement', string>;

  const api = (method: string, path: string, body?: unknown) =>
    t.request(method, path, { apiKey: account.apiKey, body });
  const balance = async () => (await api('GET', '/v1/account')).body.credits as number;
  const spooled = () => readdirSync(t.config.storage.spoolDir);
  const create = async (body: Record<string, unknown>) => {
    const res = await api('POST', '/v1/pdf/create', { template_id: ids.statement, ...body });
    expect(res.status, res.bytes.toString('utf8', 0, 300)).toBe(200);
    return res;
  };
  /** The document Statement n as the service should deliver it, whichever way it left. */
  const expectStatement = (pdf: Buffer, n: number, due: string) => {
    expect(pdfInfo(pdf)).toMatchObject({
      Tagged: 'yes',
      'PDF version': '1.5',
      Title: `Statement ${n}`,
      Producer: expect.stringMatching(/^Pressroom /),
    });
    expect(pdfText(pdf)).toContain(`Balance due ${due} EUR`);
    expect(pdfOutlineTitles(pdf)).toEqual([`Statement ${n}`, 'Balance']);
    // Compacted into object streams, and still a sound file with its link.
    expect(pdf.includes('/ObjStm')).toBe(true);
    expect(pdfTool('qpdf', pdf, ['--check'])).toContain('No syntax or stream encoding errors');
    expect(pdfExpandedBytes(pdf)).toContain('(https://example.com/pay)');
  };

  beforeAll(async () => {
    s3 = await startS3Server({ accessKeyId: ACCESS_KEY, secretAccessKey: SECRET, buckets: ['customer-pdfs'] });
    t = await startTestApp(dialect, { PRESSROOM_JOB_POLL_MS: '100' }, { tuning: { storage: { spoolAboveBytes: 0 } } });
    t.services.startWorkers();
    account = await t.createAccount({ credits: 20, plan: 'enterprise' });
    ids = await createTemplates(t, account.apiKey, { statement: { name: 'Statement', html: STATEMENT } });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await s3?.stop();
  });

  it('delivers a download link to the compacted document, charged once, and leaves no spool file', async () => {
    const credits = await balance();
    const res = await create({ data: { n: 1, due: '45.50' } });
    const download = await fetch(res.body.url as string);
    expect(download.status).toBe(200);
    const pdf = Buffer.from(await download.arrayBuffer());
    expectStatement(pdf, 1, '45.50');
    const row = await t.services.database.db
      .selectFrom('files')
      .select('size')
      .where('account_id', '=', account.accountId)
      .orderBy('created_at', 'desc')
      .executeTakeFirstOrThrow();
    expect(Number(row.size)).toBe(pdf.length);
    expect(await balance()).toBe(credits - 1);
    expect(spooled()).toEqual([]);
  });

  it('answers with the bytes, and a job delivers the same document', async () => {
    const bytes = (await create({ data: { n: 2, due: '12.00' }, export_type: 'binary' })).bytes;
    expectStatement(bytes, 2, '12.00');
    const job = await api('POST', '/v1/pdf/create-async', { template_id: ids.statement, data: { n: 3, due: '7.25' } });
    expect(job.status, JSON.stringify(job.body)).toBe(200);
    expectStatement(await completedJobPdf(t, account.apiKey, job.body.job_id, 240_000), 3, '7.25');
    expect(spooled()).toEqual([]);
  }, 300_000);

  it("uploads to the customer's bucket; a failed upload is refunded; neither leaves a spool file", async () => {
    const settings = {
      endpoint_url: s3.endpoint,
      access_key_id: ACCESS_KEY,
      secret_access_key: SECRET,
      bucket_name: 'customer-pdfs',
      default_prefix: 'statements',
    };
    expect((await api('POST', '/v1/integrations/s3', settings)).body).toEqual({ success: true });
    const res = await create({ data: { n: 4, due: '99.90' }, store_s3: true, filename: 'statement-4' });
    expect(res.body).toMatchObject({ s3_bucket: 'customer-pdfs', s3_key: 'statements/statement-4.pdf' });
    expectStatement((await s3.readObject('customer-pdfs', 'statements/statement-4.pdf'))!, 4, '99.90');

    const credits = await balance();
    const failed = await api('POST', '/v1/pdf/create', {
      template_id: ids.statement,
      data: { n: 5, due: '1.00' },
      store_s3: true,
      s3_bucket: 'no-such-bucket',
    });
    expect(failed.status, JSON.stringify(failed.body)).toBe(502);
    expect(failed.body).toMatchObject({
      error: 'S3_UPLOAD_FAILED',
      message: expect.stringMatching(/bucket not found/i),
    });
    expect(await balance()).toBe(credits);
    expect(spooled()).toEqual([]);
  });

  it('counts them in /metrics: every document above went through the spool', async () => {
    const metrics = (await t.request('GET', '/metrics')).body as string;
    const count = (pattern: RegExp) => Number(pattern.exec(metrics)?.[1]);
    // Five documents — the link, the bytes, the job, the upload and the failed upload — all spooled and
    // compacted (a job attempt retried after a transient failure would add one).
    const spooledCount = count(/^pressroom_pdf_spooled_total (\d+)$/m);
    expect(spooledCount).toBeGreaterThanOrEqual(5);
    expect(count(/^pressroom_pdf_compactions_total\{outcome="compacted"\} (\d+)$/m)).toBeGreaterThanOrEqual(5);
    expect(t.config.storage.spoolDir).toBe(join(t.config.dataDir, 'spool'));
  });
});
