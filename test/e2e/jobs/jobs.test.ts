/**
 * Asynchronous generation over real HTTP with real Chromium, on SQLite and PostgreSQL: create-async →
 * poll → completed (the PDF holds the data), failures refunded once with a pdf.failed webhook, signed
 * webhooks retried with the same id, the 422/402/404 answers, listing and ownership.
 */
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DIALECTS } from '../../support/databases.js';
import { pdfText } from '../../support/documents/pdf-tools.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

const INVOICE = `<html><body><h1>Invoice {{ invoice.number }}</h1><p>Customer: {{ customer.name }}</p>
{% for item in items %}<p>{{ loop.index }}. {{ item.description }}</p>{% endfor %}</body></html>`;
const DATA = {
  invoice: { number: 'INV-ASYNC-7' },
  customer: { name: 'Grace Hopper Ltd' },
  items: [{ description: 'Compiler' }, { description: 'Debugging moth' }],
};
const SECRET = 'a-webhook-secret-ÄÖÜ-0123456789';

const JOB_KEYS = [
  'completed_at',
  'created_at',
  'error_code',
  'error_message',
  'export_type',
  'filename',
  'id',
  'result_expires_at',
  'result_filename',
  'result_s3_bucket',
  'result_s3_key',
  'result_url',
  'status',
  'store_s3',
  'template_id',
  'updated_at',
  'version',
];

describe.each(DIALECTS)('async jobs on %s', (dialect) => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let alice: { accountId: string; apiKey: string };
  let bob: { accountId: string; apiKey: string };
  let templateId: string;
  let brokenId: string;

  const createAsync = (body: Record<string, unknown>, apiKey = alice.apiKey, headers?: Record<string, string>) =>
    t.request('POST', '/v1/pdf/create-async', { apiKey, body, headers });
  const job = (id: string, apiKey = alice.apiKey) =>
    t.request('GET', `/v1/pdf/jobs/${encodeURIComponent(id)}`, { apiKey });
  const waitForJob = async (id: string, apiKey = alice.apiKey, timeoutMs = 90_000) => {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const res = await job(id, apiKey);
      expect(res.status).toBe(200);
      if (res.body.status === 'completed' || res.body.status === 'failed') return res.body;
      if (Date.now() > end) throw new Error(`job ${id} still ${res.body.status}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const transactions = async (apiKey = alice.apiKey) =>
    (await t.request('GET', '/v1/account/transactions?limit=1000', { apiKey })).body.transactions as {
      transaction_ref: string;
      transaction_type: string;
      credits: number;
      exec_tm: number | null;
    }[];
  const balance = async (apiKey = alice.apiKey) =>
    (await t.request('GET', '/v1/account', { apiKey })).body.credits as number;
  const jobRows = async () =>
    Number(
      (
        await t.services.database.db
          .selectFrom('jobs')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const download = (url: string) => {
    const link = new URL(url);
    return t.request('GET', `${link.pathname}${link.search}`);
  };

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    t = await startTestApp(
      dialect,
      { PRESSROOM_JOB_POLL_MS: '100', PRESSROOM_RENDER_CONCURRENCY: '2' },
      { tuning: { webhooks: { baseDelayMs: 50 } } },
    );
    t.services.startWorkers();
    alice = await t.createAccount({ credits: 30, plan: 'enterprise' });
    bob = await t.createAccount({ credits: 5, plan: 'enterprise' });
    templateId = (
      await t.request('POST', '/v1/templates', { apiKey: alice.apiKey, body: { name: 'Invoice', html: INVOICE } })
    ).body.id;
    brokenId = (
      await t.request('POST', '/v1/templates', {
        apiKey: alice.apiKey,
        body: { name: 'Broken', html: 'line one\n{{ undefined_function() }}' },
      })
    ).body.id;
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.script([200]);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('accepts at once, completes, and the result URL downloads a PDF holding the data; one signed pdf.completed webhook', async () => {
    const before = await balance();
    const res = await createAsync({
      template_id: templateId,
      data: DATA,
      filename: 'inv-7',
      webhook_url: receiver.url,
      webhook_secret: SECRET,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({
      job_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: 'pending',
      credits_remaining: before - 1,
    });

    const done = await waitForJob(res.body.job_id);
    expect(Object.keys(done).sort()).toEqual(JOB_KEYS);
    expect(done).toMatchObject({
      id: res.body.job_id,
      status: 'completed',
      template_id: templateId,
      export_type: 'url',
      filename: 'inv-7',
      store_s3: false,
      result_filename: 'inv-7.pdf',
      result_s3_bucket: null,
      result_s3_key: null,
      error_code: null,
      error_message: null,
    });
    for (const key of ['created_at', 'updated_at', 'completed_at', 'result_expires_at'])
      expect(done[key]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(Date.parse(done.result_expires_at) - Date.parse(done.completed_at)).toBeGreaterThan(86_000_000);
    const pdf = await download(done.result_url);
    expect(pdf.status).toBe(200);
    expect(pdf.headers.get('content-type')).toBe('application/pdf');
    const text = pdfText(pdf.bytes);
    for (const expected of ['Invoice INV-ASYNC-7', 'Grace Hopper Ltd', '1. Compiler', '2. Debugging moth'])
      expect(text).toContain(expected);

    const [hook] = await receiver.waitFor(1);
    expect(hook!.json).toEqual({
      event: 'pdf.completed',
      job_id: res.body.job_id,
      status: 'completed',
      result: { url: done.result_url, filename: 'inv-7.pdf' },
    });
    expect(hook!.headers['x-service-signature']).toBe(
      createHmac('sha256', Buffer.from(SECRET, 'utf8')).update(hook!.raw).digest('hex'),
    );

    const txs = await transactions();
    const pdfgen = txs.filter((x) => x.transaction_type === 'PDFGEN');
    expect(pdfgen[0]).toMatchObject({ credits: 1 });
    expect(pdfgen[0]!.exec_tm).toBeGreaterThan(0);
    expect(txs.filter((x) => x.transaction_type === 'REFUND')).toHaveLength(0);
    expect(await balance()).toBe(before - 1);
    // The secret is stored sealed, never in clear.
    const row = await t.services.database.db
      .selectFrom('jobs')
      .selectAll()
      .where('id', '=', res.body.job_id)
      .executeTakeFirstOrThrow();
    expect(row.webhook_secret).toMatch(/^v1\./);
    expect(JSON.stringify(row)).not.toContain(SECRET);
  });

  it('ends a failing template `failed` with its error, exactly one REFUND and a pdf.failed webhook', async () => {
    const before = await balance();
    const res = await createAsync({ template_id: brokenId, data: {}, webhook_url: receiver.url });
    expect(res.status).toBe(200);
    expect(res.body.credits_remaining).toBe(before - 1);
    const done = await waitForJob(res.body.job_id);
    expect(done).toMatchObject({
      status: 'failed',
      error_code: 'TEMPLATE_RENDER_ERROR',
      result_url: null,
      result_filename: null,
    });
    expect(done.error_message).toMatch(/line 2/);
    expect(done.completed_at).not.toBeNull();

    const [hook] = await receiver.waitFor(1);
    expect(hook!.json).toEqual({
      event: 'pdf.failed',
      job_id: res.body.job_id,
      status: 'failed',
      error: { code: 'TEMPLATE_RENDER_ERROR', message: done.error_message },
    });
    expect(hook!.headers['x-service-signature']).toBeUndefined();
    const row = await t.services.database.db
      .selectFrom('jobs')
      .select('transaction_ref')
      .where('id', '=', res.body.job_id)
      .executeTakeFirstOrThrow();
    const refunds = await t.services.database.db
      .selectFrom('credit_transactions')
      .selectAll()
      .where('refund_of', '=', row.transaction_ref)
      .execute();
    expect(refunds).toEqual([expect.objectContaining({ transaction_type: 'REFUND', credits: -1 })]);
    expect(await balance()).toBe(before);
  });

  it('retries a webhook answered 500, 500, 200 with the same webhook-id, each attempt signed verifiably', async () => {
    receiver.script([500, 500, 200]);
    const res = await createAsync({
      template_id: templateId,
      data: DATA,
      webhook_url: receiver.url,
      webhook_secret: SECRET,
    });
    const got = await receiver.waitFor(3);
    expect(got.map((g) => g.answered)).toEqual([500, 500, 200]);
    expect(new Set(got.map((g) => g.headers['webhook-id'])).size).toBe(1);
    for (const g of got) {
      expect(g.json).toMatchObject({ event: 'pdf.completed', job_id: res.body.job_id });
      expect(g.raw.equals(got[0]!.raw)).toBe(true);
      const key = Buffer.from(SECRET, 'utf8');
      expect(g.headers['x-service-signature']).toBe(createHmac('sha256', key).update(g.raw).digest('hex'));
      const signed = Buffer.concat([
        Buffer.from(`${g.headers['webhook-id']}.${g.headers['webhook-timestamp']}.`),
        g.raw,
      ]);
      expect(g.headers['webhook-signature']).toBe(`v1,${createHmac('sha256', key).update(signed).digest('base64')}`);
    }
    // A fourth attempt would follow at once (the base delay is 50 ms): a short wait for what must not happen.
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).toHaveLength(3);
  });

  it('answers a repeated Idempotency-Key with the same job, charged once', async () => {
    const before = await balance();
    const headers = { 'idempotency-key': `async-${dialect}-1` };
    const first = await createAsync({ template_id: templateId, data: DATA }, alice.apiKey, headers);
    const again = await createAsync({ template_id: templateId, data: DATA }, alice.apiKey, headers);
    expect(again.body).toEqual(first.body);
    expect(await balance()).toBe(before - 1);
    // The key was answered in the transaction that inserted the job: any process replays that job.
    const key = await t.services.database.db
      .selectFrom('idempotency_keys')
      .select(['state', 'response'])
      .where('idem_key', '=', headers['idempotency-key'])
      .executeTakeFirstOrThrow();
    expect({ state: key.state, response: JSON.parse(key.response!) }).toEqual({ state: 'done', response: first.body });
    await waitForJob(first.body.job_id);
  });

  it('refuses invalid requests with 422 in the FastAPI shape, writing nothing', async () => {
    const rows = await jobRows();
    const cases: Array<[Record<string, unknown>, (string | number)[]]> = [
      [{ template_id: templateId, data: {}, export_type: 'binary' }, ['body', 'export_type']],
      [
        { template_id: templateId, data: {}, webhook_url: receiver.url, webhook_secret: 'short' },
        ['body', 'webhook_secret'],
      ],
      [{ template_id: templateId, data: {}, webhook_url: 'x'.repeat(2084) }, ['body', 'webhook_url']],
      [{ template_id: templateId, data: {}, webhook_url: '' }, ['body', 'webhook_url']],
      [{ template_id: templateId, data: {}, webhook_url: 'ftp://hooks.example.com/x' }, ['body', 'webhook_url']],
      [{ template_id: templateId, data: {}, webhook_url: 'not a url' }, ['body', 'webhook_url']],
    ];
    for (const [body, loc] of cases) {
      const res = await createAsync(body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(422);
      expect(res.body.detail.map((d: { loc: unknown }) => d.loc)).toContainEqual(loc);
    }
    // 422 comes before 404: an unknown template with a bad webhook is a validation error.
    const order = await createAsync({ template_id: 'zzzzzzzzzzzz', data: {}, webhook_url: 'ftp://x.example/' });
    expect(order.status).toBe(422);
    expect(await jobRows()).toBe(rows);
  });

  it('requires an https webhook on a public host unless PRESSROOM_ALLOW_PRIVATE_NETWORKS=true', async () => {
    const strict = await startTestApp(dialect, { PRESSROOM_ALLOW_PRIVATE_NETWORKS: 'false' });
    try {
      const carol = await strict.createAccount({ credits: 3 });
      const tpl = (
        await strict.request('POST', '/v1/templates', { apiKey: carol.apiKey, body: { name: 'x', html: 'x' } })
      ).body.id;
      for (const url of [
        'http://hooks.example.com/x',
        receiver.url,
        'https://127.0.0.1/x',
        'https://10.0.0.8/x',
        'https://[::1]/x',
        'https://localhost/x',
        'https://169.254.169.254/latest',
      ]) {
        const res = await strict.request('POST', '/v1/pdf/create-async', {
          apiKey: carol.apiKey,
          body: { template_id: tpl, data: {}, webhook_url: url },
        });
        expect(res.status, url).toBe(422);
        expect(res.body.detail).toEqual([
          expect.objectContaining({ loc: ['body', 'webhook_url'], msg: expect.stringMatching(/^webhook_url must/) }),
        ]);
        expect(JSON.stringify(res.body)).not.toMatch(/127\.0|10\.0\.0|169\.254/);
      }
      const ok = await strict.request('POST', '/v1/pdf/create-async', {
        apiKey: carol.apiKey,
        body: { template_id: tpl, data: {}, webhook_url: 'https://hooks.example.com/pressroom' },
      });
      expect(ok.status).toBe(200);
    } finally {
      await strict.close();
    }
  });

  it("answers 402 without writing a job, 404 for an unknown template, 403 for another account's", async () => {
    const broke = await t.createAccount({ credits: 0 });
    const tpl = (await t.request('POST', '/v1/templates', { apiKey: broke.apiKey, body: { name: 'x', html: 'x' } }))
      .body.id;
    const rows = await jobRows();
    const poor = await createAsync({ template_id: tpl, data: {} }, broke.apiKey);
    expect(poor.status).toBe(402);
    expect(poor.body.error).toBe('INSUFFICIENT_CREDITS');
    expect((await createAsync({ template_id: 'zzzzzzzzzzzz', data: {} })).body.error).toBe('TEMPLATE_NOT_FOUND');
    const foreign = await createAsync({ template_id: templateId, data: {} }, bob.apiKey);
    expect(foreign.status).toBe(403);
    const s3 = await createAsync({ template_id: templateId, data: {}, store_s3: true });
    expect(s3.status).toBe(400);
    expect(await jobRows()).toBe(rows);
    expect((await transactions(broke.apiKey)).filter((x) => x.transaction_type === 'PDFGEN')).toHaveLength(0);
  });

  it("lists only the caller's jobs, newest first, with status filter, paging and total", async () => {
    const dave = await t.createAccount({ credits: 10, plan: 'enterprise' });
    const tpl = (
      await t.request('POST', '/v1/templates', { apiKey: dave.apiKey, body: { name: 'x', html: '<p>{{ n }}</p>' } })
    ).body.id;
    const bad = (
      await t.request('POST', '/v1/templates', { apiKey: dave.apiKey, body: { name: 'y', html: '{{ nope() }}' } })
    ).body.id;
    const ids: string[] = [];
    for (let n = 0; n < 4; n++)
      ids.push(
        (
          await t.request('POST', '/v1/pdf/create-async', {
            apiKey: dave.apiKey,
            body: { template_id: n === 3 ? bad : tpl, data: { n } },
          })
        ).body.job_id,
      );
    for (const id of ids) await waitForJob(id, dave.apiKey);

    const all = await t.request('GET', '/v1/pdf/jobs', { apiKey: dave.apiKey });
    expect(all.body).toMatchObject({ total: 4, limit: 20, offset: 0 });
    expect(all.body.jobs.map((j: { id: string }) => j.id)).toEqual([...ids].reverse());
    expect(Object.keys(all.body.jobs[0]).sort()).toEqual(JOB_KEYS);
    const page = await t.request('GET', '/v1/pdf/jobs?limit=2&offset=1', { apiKey: dave.apiKey });
    expect(page.body).toMatchObject({ total: 4, limit: 2, offset: 1 });
    expect(page.body.jobs.map((j: { id: string }) => j.id)).toEqual([ids[2], ids[1]]);
    const failed = await t.request('GET', '/v1/pdf/jobs?status=failed', { apiKey: dave.apiKey });
    expect(failed.body.total).toBe(1);
    expect(failed.body.jobs[0]).toMatchObject({ id: ids[3], status: 'failed' });
    expect(
      (await t.request('GET', '/v1/pdf/jobs?status=completed&limit=1', { apiKey: dave.apiKey })).body,
    ).toMatchObject({ total: 3, jobs: [expect.objectContaining({ id: ids[2] })] });
    expect((await t.request('GET', '/v1/pdf/jobs?status=pending', { apiKey: dave.apiKey })).body).toMatchObject({
      total: 0,
      jobs: [],
    });

    const others = await t.request('GET', '/v1/pdf/jobs?limit=100', { apiKey: bob.apiKey });
    expect(others.body.jobs.map((j: { id: string }) => j.id)).not.toContain(ids[0]);

    for (const [query, loc] of [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['offset=-1', 'offset'],
      ['status=done', 'status'],
      ['limit=abc', 'limit'],
    ] as const) {
      const res = await t.request('GET', `/v1/pdf/jobs?${query}`, { apiKey: dave.apiKey });
      expect(res.status, query).toBe(422);
      expect(res.body.detail[0].loc).toEqual(['query', loc]);
    }
  });

  it("answers 404 JOB_NOT_FOUND for another account's job and for unknown or malformed ids", async () => {
    const res = await createAsync({ template_id: templateId, data: DATA });
    expect((await job(res.body.job_id)).status).toBe(200);
    for (const id of [
      res.body.job_id,
      '00000000-0000-4000-8000-000000000000',
      'not-a-uuid',
      'x'.repeat(150),
      "'; drop table jobs; --",
    ]) {
      const other = await job(id, bob.apiKey);
      expect(other.status, id).toBe(404);
      expect(other.body).toEqual({ error: 'JOB_NOT_FOUND', message: expect.any(String) });
    }
    await waitForJob(res.body.job_id);
  });

  it('accepts API keys only on the job endpoints (no access tokens)', async () => {
    const issued = await t.request('POST', `/v1/admin/accounts/${alice.accountId}/access-tokens`, {
      bearer: 'test-admin-token-0123456789',
      body: {},
    });
    const token = issued.body.access_token as string;
    expect((await t.request('GET', '/v1/pdf/jobs', { bearer: token })).status).toBe(401);
    expect((await t.request('GET', '/v1/pdf/jobs/x', { bearer: token })).status).toBe(401);
    expect(
      (await t.request('POST', '/v1/pdf/create-async', { bearer: token, body: { template_id: templateId, data: {} } }))
        .status,
    ).toBe(401);
    expect((await t.request('GET', '/v1/pdf/jobs')).status).toBe(401);
  });

  it('deletes jobs that finished past the retention period with their webhook records, keeps recent ones, pending deliveries and the ledger', async () => {
    const carol = await t.createAccount({ credits: 3, plan: 'enterprise' });
    const carolTemplate = (
      await t.request('POST', '/v1/templates', { apiKey: carol.apiKey, body: { name: 'Invoice', html: INVOICE } })
    ).body.id;
    const ids: string[] = [];
    for (const label of ['old', 'recent', 'old-undelivered']) {
      const res = await createAsync(
        { template_id: carolTemplate, data: { ...DATA, invoice: { number: label } }, webhook_url: receiver.url },
        carol.apiKey,
      );
      expect(res.status).toBe(200);
      ids.push(res.body.job_id);
    }
    for (const id of ids) expect((await waitForJob(id, carol.apiKey)).status).toBe('completed');
    const [oldId, recentId, undeliveredId] = ids as [string, string, string];
    const db = t.services.database.db;
    // Settled in the database, not only received: a delivery still being recorded as delivered would
    // overwrite the 'pending' state set below (a race seen in CI).
    const delivered = async () =>
      (await db.selectFrom('webhook_deliveries').select('state').where('job_id', 'in', ids).execute()).filter(
        (d) => d.state === 'delivered',
      ).length;
    await expect.poll(delivered, { timeout: 15_000 }).toBe(3);
    const now = Date.now();
    const aged = now - 31 * 86_400_000;
    await db
      .updateTable('jobs')
      .set({ updated_at: aged, completed_at: aged })
      .where('id', 'in', [oldId, undeliveredId])
      .execute();
    // A delivery still retrying keeps its job until it settles.
    await db
      .updateTable('webhook_deliveries')
      .set({ state: 'pending', next_attempt_at: now + 3_600_000 })
      .where('job_id', '=', undeliveredId)
      .execute();
    const ledgerBefore = await transactions(carol.apiKey);

    expect(await t.services.jobs.sweep()).toBe(1);

    expect((await job(oldId, carol.apiKey)).status).toBe(404);
    expect((await job(recentId, carol.apiKey)).body.status).toBe('completed');
    expect((await job(undeliveredId, carol.apiKey)).body.status).toBe('completed');
    const deliveries = await db.selectFrom('webhook_deliveries').select('job_id').where('job_id', 'in', ids).execute();
    expect(deliveries.map((d) => d.job_id).sort()).toEqual([recentId, undeliveredId].sort());
    const listed = await t.request('GET', '/v1/pdf/jobs?limit=100', { apiKey: carol.apiKey });
    expect(listed.body.jobs.map((j: { id: string }) => j.id).sort()).toEqual([recentId, undeliveredId].sort());
    // The ledger is permanent: the three charges stay, and the balance still matches them.
    expect(await transactions(carol.apiKey)).toEqual(ledgerBefore);
    expect(ledgerBefore.filter((x) => x.transaction_type === 'PDFGEN')).toHaveLength(3);
    expect(await balance(carol.apiKey)).toBe(0);

    await db
      .updateTable('webhook_deliveries')
      .set({ state: 'delivered' })
      .where('job_id', '=', undeliveredId)
      .execute();
    expect(await t.services.jobs.sweep()).toBe(1);
    expect((await job(undeliveredId, carol.apiKey)).status).toBe(404);
  });
});
