/**
 * Synchronous generation over real HTTP with real Chromium, on SQLite and PostgreSQL: what the user gets
 * (the PDF's text holds the data), what it costs (the ledger), and what goes wrong cleanly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../../support/databases.js';
import { pdfInfo, pdfPageText, pdfPages, pdfText, pdfXmp } from '../../support/documents/pdf-tools.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { downloadLinkKey, signDownload } from '../../../src/storage/signed-link.js';

const INVOICE = `<html><head><style>@page { size: A4; margin: 15mm }</style></head><body>
<h1>Invoice {{ invoice.number }}</h1>
<p>Customer: {{ customer.name }}</p>
<table>{% for item in items %}<tr><td>{{ loop.index }}. {{ item.description }}</td><td>{{ item.qty }} x {{ item.price }}</td></tr>{% endfor %}</table>
<p>Note: {{ note }}</p>
{% if paid %}<p>PAID IN FULL</p>{% else %}<p>AMOUNT DUE</p>{% endif %}
</body></html>`;

const DATA = {
  invoice: { number: 'INV-2026-0042' },
  customer: { name: 'Ada Lovelace & Partners' },
  items: [
    { description: 'Analytical engine', qty: 1, price: '1,200.00' },
    { description: 'Punch cards <script>alert(1)</script>', qty: 500, price: '0.10' },
  ],
  note: 'Thanks & see you',
  paid: false,
};

describe.each(DIALECTS)('POST /v1/pdf/create on %s', (dialect) => {
  let t: TestApp;
  let account: { accountId: string; apiKey: string };
  let templateId: string;

  const balance = async (apiKey: string) => (await t.request('GET', '/v1/account', { apiKey })).body.credits as number;
  const transactions = async (apiKey: string) =>
    (await t.request('GET', '/v1/account/transactions', { apiKey })).body.transactions as {
      transaction_type: string;
      credits: number;
      template_id: string | null;
      exec_tm: number | null;
    }[];
  const fileCount = async () =>
    Number(
      (
        await t.services.database.db
          .selectFrom('files')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const create = (body: Record<string, unknown>, apiKey = account.apiKey, headers?: Record<string, string>) =>
    t.request('POST', '/v1/pdf/create', { apiKey, body, headers });

  beforeAll(async () => {
    // Short, for the runaway test below, yet well above what an ordinary template takes on a busy
    // machine (at 1.5 s a one-line template was seen timing out under load).
    t = await startTestApp(dialect, { PRESSROOM_TEMPLATE_TIMEOUT_MS: '3000', PRESSROOM_RENDER_CONCURRENCY: '2' });
    account = await t.createAccount({ credits: 50, plan: 'enterprise' });
    const created = await t.request('POST', '/v1/templates', {
      apiKey: account.apiKey,
      body: { name: 'Invoice', html: INVOICE },
    });
    templateId = created.body.id;
  });
  afterAll(async () => t?.close());

  it('renders the data into a PDF behind a signed, expiring URL and charges one credit', async () => {
    const before = await balance(account.apiKey);
    const res = await create({ template_id: templateId, data: DATA });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/v1\/files\//),
      filename: 'document.pdf',
      credits_remaining: before - 1,
      expires_in: 86400,
    });

    const link = new URL(res.body.url);
    const download = await t.request('GET', `${link.pathname}${link.search}`);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/pdf');
    expect(download.headers.get('content-disposition')).toContain('filename="document.pdf"');
    const text = pdfText(download.bytes);
    for (const expected of [
      'Invoice INV-2026-0042',
      'Ada Lovelace & Partners',
      '1. Analytical engine',
      '2. Punch cards <script>alert(1)</script>',
      '500 x 0.10',
      'Thanks & see you',
      'AMOUNT DUE',
    ]) {
      expect(text).toContain(expected);
    }
    expect(text).not.toContain('PAID IN FULL');

    const [pdfgen] = await transactions(account.apiKey);
    expect(pdfgen).toMatchObject({ transaction_type: 'PDFGEN', credits: 1, template_id: templateId });
    expect(pdfgen!.exec_tm).toBeGreaterThan(0);
    expect(await balance(account.apiKey)).toBe(before - 1);
  });

  it('returns the bytes for export_type binary, with dotted keys bound like nested objects', async () => {
    const res = await create({
      template_id: templateId,
      export_type: 'binary',
      data: { ...DATA, 'invoice.number': 'ignored', customer: undefined, 'customer.name': 'Flat Key Ltd', paid: true },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.bytes.subarray(0, 5).toString()).toBe('%PDF-');
    const text = pdfText(res.bytes);
    expect(text).toContain('Invoice INV-2026-0042');
    expect(text).toContain('Flat Key Ltd');
    expect(text).toContain('PAID IN FULL');
    expect(pdfInfo(res.bytes).Tagged).toBe('yes');
  });

  it('names the file and sets the expiry as asked; refuses altered and expired links', async () => {
    const res = await create({ template_id: templateId, data: DATA, filename: 'inv-42.2026', expiration: 120 });
    expect(res.body).toMatchObject({ filename: 'inv-42.2026.pdf', expires_in: 120 });
    const link = new URL(res.body.url);
    const ok = await t.request('GET', `${link.pathname}${link.search}`);
    expect(ok.headers.get('content-disposition')).toContain('inv-42.2026.pdf');

    const tampered = new URL(link);
    tampered.searchParams.set('expires', String(Number(link.searchParams.get('expires')) + 3600));
    const bad = await t.request('GET', `${tampered.pathname}${tampered.search}`);
    expect(bad.status).toBe(403);
    expect(bad.body.error).toBe('LINK_INVALID');

    const fileId = link.pathname.split('/')[3]!;
    const old = signDownload(
      { fileId, filename: 'inv-42.2026.pdf', expiresAt: new Date(Date.now() - 1000) },
      downloadLinkKey(t.config.secretKey),
    );
    const expired = await t.request('GET', `${link.pathname}?expires=${old.expires}&signature=${old.signature}`);
    expect(expired.status).toBe(403);
    expect(expired.body.error).toBe('LINK_EXPIRED');
  });

  it('puts header and footer HTML with page numbers on every page', async () => {
    const long = await t.request('POST', '/v1/templates', {
      apiKey: account.apiKey,
      body: {
        name: 'Long',
        html: '{% for i in range(0, rows) %}<p style="margin:0;height:9mm">Row {{ i }}</p>{% endfor %}',
        page: {
          format: 'A5',
          margin: { top: '20mm', bottom: '20mm', left: '10mm', right: '10mm' },
          header_html: '<div style="font-size:9px">{{ title }}</div>',
          footer_html:
            '<div style="font-size:9px">Page <span class="pageNumber"></span> of <span class="totalPages"></span></div>',
        },
      },
    });
    const res = await create({
      template_id: long.body.id,
      export_type: 'binary',
      data: { rows: 40, title: 'Quarterly numbers' },
    });
    expect(res.status).toBe(200);
    const pages = pdfPages(res.bytes);
    expect(pages).toBeGreaterThanOrEqual(2);
    expect(pdfInfo(res.bytes)['Page size']).toMatch(/^4(19|20)(\.\d+)? x 595(\.\d+)? pts/);
    for (let page = 1; page <= pages; page++) {
      const text = pdfPageText(res.bytes, page);
      expect(text).toContain(`Page ${page} of ${pages}`);
      expect(text).toContain('Quarterly numbers');
    }
  });

  it('writes PDF/A when asked', async () => {
    const res = await create({ template_id: templateId, export_type: 'binary', data: DATA, pdf_variant: 'pdf/a-2b' });
    expect(res.status).toBe(200);
    const xmp = pdfXmp(res.bytes);
    expect(xmp).toMatch(/pdfaid:part(="|>)2/);
    expect(xmp).toMatch(/pdfaid:conformance(="|>)B/);
    expect(pdfText(res.bytes)).toContain('INV-2026-0042');
  });

  it('refunds exactly once when the template fails, naming the cause and the line', async () => {
    const broken = await t.request('POST', '/v1/templates', {
      apiKey: account.apiKey,
      body: { name: 'Broken', html: 'line one\n{{ customer.name }}\n{{ undefined_function() }}' },
    });
    const before = await balance(account.apiKey);
    const res = await create({ template_id: broken.body.id, data: DATA });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: 'TEMPLATE_RENDER_ERROR', line: 3 });
    expect(res.body.message).toMatch(/undefined_function|undefined|not a function/i);
    expect(await balance(account.apiKey)).toBe(before);
    const [refund, pdfgen] = await transactions(account.apiKey);
    expect(refund).toMatchObject({ transaction_type: 'REFUND', credits: -1 });
    expect(pdfgen).toMatchObject({ transaction_type: 'PDFGEN', credits: 1, template_id: broken.body.id });
  });

  it('stops a runaway template at the time limit, refunds it, and keeps serving', async () => {
    const runaway = await t.request('POST', '/v1/templates', {
      apiKey: account.apiKey,
      body: {
        name: 'Runaway',
        html: '{% for i in range(0, 100000) %}{% for j in range(0, 100000) %}{% endfor %}{% endfor %}done',
      },
    });
    const before = await balance(account.apiKey);
    const [slow, normal] = await Promise.all([
      create({ template_id: runaway.body.id, data: {} }),
      create({ template_id: templateId, data: DATA, export_type: 'binary' }),
    ]);
    expect(slow.status).toBe(422);
    expect(slow.body.error).toBe('TEMPLATE_TIMEOUT');
    expect(normal.status).toBe(200);
    expect(pdfText(normal.bytes)).toContain('INV-2026-0042');
    expect(await balance(account.apiKey)).toBe(before - 1);
  });

  it('answers the first result to a retry with the same Idempotency-Key, charging once', async () => {
    const before = await balance(account.apiKey);
    const body = { template_id: templateId, data: DATA, filename: 'idem' };
    const first = await create(body, account.apiKey, { 'idempotency-key': `key-${dialect}-1` });
    const second = await create({ data: DATA, filename: 'idem', template_id: templateId }, account.apiKey, {
      'idempotency-key': `key-${dialect}-1`,
    });
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.body.url).toBe(first.body.url);
    expect(await balance(account.apiKey)).toBe(before - 1);

    const reused = await create({ ...body, filename: 'other' }, account.apiKey, {
      'idempotency-key': `key-${dialect}-1`,
    });
    expect(reused.status).toBe(422);
    expect(reused.body.detail[0]).toMatchObject({ loc: ['header', 'idempotency-key'], type: 'idempotency_key_reused' });

    const binary = { template_id: templateId, data: DATA, export_type: 'binary' };
    const b1 = await create(binary, account.apiKey, { 'idempotency-key': `key-${dialect}-2` });
    const b2 = await create(binary, account.apiKey, { 'idempotency-key': `key-${dialect}-2` });
    expect(b2.bytes.equals(b1.bytes)).toBe(true);
    expect(await balance(account.apiKey)).toBe(before - 2);

    const tooLong = await create(body, account.apiKey, { 'idempotency-key': 'k'.repeat(256) });
    expect(tooLong.status).toBe(422);
  });

  it('refuses with 402 at zero credits before any work, and checks ownership first', async () => {
    const broke = await t.createAccount({ credits: 0 });
    const own = await t.request('POST', '/v1/templates', {
      apiKey: broke.apiKey,
      body: { name: 'Mine', html: '{{ a }}' },
    });
    const files = await fileCount();
    const res = await create({ template_id: own.body.id, data: { a: 1 } }, broke.apiKey);
    expect(res.status).toBe(402);
    expect(res.body.error).toBe('INSUFFICIENT_CREDITS');
    expect(await transactions(broke.apiKey)).toEqual([]);
    expect(await fileCount()).toBe(files);
    expect((await create({ template_id: templateId, data: {} }, broke.apiKey)).status).toBe(403);
    expect((await create({ template_id: 'zzzzzzzzzzzz', data: {} }, broke.apiKey)).status).toBe(404);
  });

  it('validates the request in the FastAPI shape and charges nothing', async () => {
    const before = await balance(account.apiKey);
    const res = await create({
      template_id: 'short',
      data: 'x',
      export_type: 'pdf',
      expiration: 59,
      filename: 'bad name!',
      s3_bucket: 'Bad_Bucket',
      pdf_variant: 'pdf/a-4',
    });
    expect(res.status).toBe(422);
    const locs = res.body.detail.map((d: { loc: string[] }) => d.loc.join('.'));
    expect(locs).toEqual(
      expect.arrayContaining([
        'body.template_id',
        'body.data',
        'body.export_type',
        'body.expiration',
        'body.filename',
        'body.s3_bucket',
        'body.pdf_variant',
      ]),
    );
    const traversal = await create({ template_id: templateId, data: {}, store_s3: true, s3_filepath: 'a/../../etc' });
    expect(traversal.status).toBe(422);
    expect(traversal.body.detail[0].loc).toEqual(['body', 's3_filepath']);
    const noS3 = await create({ template_id: templateId, data: {}, store_s3: true });
    expect(noS3.status).toBe(400);
    expect(noS3.body.error).toBe('INVALID_REQUEST');
    expect(await balance(account.apiKey)).toBe(before);
  });

  it('previews unsaved template text for free, stamped PREVIEW', async () => {
    const before = await balance(account.apiKey);
    const res = await t.request('POST', '/v1/templates/preview', {
      apiKey: account.apiKey,
      body: { html: '<p>Draft for {{ who }}</p>', data: { who: 'Grace' } },
    });
    expect(res.status).toBe(200);
    const text = pdfText(res.bytes);
    expect(text).toContain('Draft for Grace');
    // The stamp is set diagonally, so pdftotext returns its letters apart.
    expect(text.replace(/\s+/g, '')).toContain('PREVIEW');
    expect(await balance(account.apiKey)).toBe(before);
    const broken = await t.request('POST', '/v1/templates/preview', {
      apiKey: account.apiKey,
      body: { html: 'ok\n{% if %}' },
    });
    expect(broken.status).toBe(422);
    expect(broken.body).toMatchObject({ error: 'TEMPLATE_SYNTAX_ERROR', line: 2 });
  });
});
