/**
 * Issue 50's API parts, on SQLite and PostgreSQL: the account's last API key cannot be revoked by the
 * account (409 LAST_API_KEY, even by two revokes racing for the last two keys), while the operator can;
 * the transaction history names what each PDFGEN and REFUND is about (job, batch, template or tool) and
 * filters by type and batch; `GET /v1/capabilities` says what this installation can do. No worker runs
 * here: jobs stay pending and a batch is cancelled, so the refunds come without a render.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../../support/databases.js';
import { installRulesPack, HAS_SHARED_RULES, INSTALL_TIMEOUT_MS } from '../../support/einvoice-rules.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../../support/test-app.js';

const liveKeys = async (t: TestApp, apiKey: string) =>
  (
    (await t.request('GET', '/v1/account/api-keys', { apiKey })).body.api_keys as {
      prefix: string;
      revoked_at: string | null;
    }[]
  ).filter((k) => k.revoked_at === null);

describe.each(DIALECTS)('account safety on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(dialect);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("refuses to revoke the account's last working key with 409 LAST_API_KEY, changing nothing", async () => {
    const { apiKey } = await t.createAccount({});
    const prefix = apiKey.slice(0, 12);
    const refused = await t.request('DELETE', `/v1/account/api-keys/${prefix}`, { apiKey });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ error: 'LAST_API_KEY', message: expect.stringContaining('Create a new key first') });
    expect((await t.request('GET', '/v1/account', { apiKey })).status).toBe(200);
    expect(await liveKeys(t, apiKey)).toHaveLength(1);

    // With a second key, the first can go; then the second is the last.
    const second = (await t.request('POST', '/v1/account/api-keys', { apiKey })).body.api_key as string;
    expect((await t.request('DELETE', `/v1/account/api-keys/${prefix}`, { apiKey })).body).toEqual({ success: true });
    expect((await t.request('GET', '/v1/account', { apiKey })).status).toBe(401);
    expect((await t.request('DELETE', `/v1/account/api-keys/${second.slice(0, 12)}`, { apiKey: second })).status).toBe(
      409,
    );
    expect((await t.request('GET', '/v1/account', { apiKey: second })).status).toBe(200);
  });

  it('lets only one of two revokes racing for the last two keys through', async () => {
    for (let round = 0; round < 5; round++) {
      const { apiKey: first } = await t.createAccount({});
      const second = (await t.request('POST', '/v1/account/api-keys', { apiKey: first })).body.api_key as string;
      // Each key revokes the other at once.
      const [byFirst, bySecond] = await Promise.all([
        t.request('DELETE', `/v1/account/api-keys/${second.slice(0, 12)}`, { apiKey: first }),
        t.request('DELETE', `/v1/account/api-keys/${first.slice(0, 12)}`, { apiKey: second }),
      ]);
      // One went through; the other was refused as the last key (409), or came after its own key was gone (401).
      const statuses = [byFirst.status, bySecond.status].sort();
      expect(statuses[0], JSON.stringify([byFirst.body, bySecond.body])).toBe(200);
      expect([401, 409]).toContain(statuses[1]);
      const survivor = byFirst.status === 200 ? first : second;
      expect(await liveKeys(t, survivor)).toHaveLength(1);
    }
  });

  it('lets the operator revoke any key, the last included, and issue another', async () => {
    const { accountId, apiKey } = await t.createAccount({});
    expect(
      (await t.request('DELETE', `/v1/admin/api-keys/${apiKey.slice(0, 12)}`, { bearer: ADMIN_TOKEN })).body,
    ).toEqual({ success: true });
    expect((await t.request('GET', '/v1/account', { apiKey })).status).toBe(401);
    const issued = await t.request('POST', `/v1/admin/accounts/${accountId}/api-keys`, { bearer: ADMIN_TOKEN });
    expect((await t.request('GET', '/v1/account', { apiKey: issued.body.api_key })).status).toBe(200);
  });

  it("does not revoke another account's key, and says it was not found", async () => {
    const alice = await t.createAccount({});
    const bob = await t.createAccount({});
    await t.request('POST', '/v1/account/api-keys', { apiKey: bob.apiKey });
    const res = await t.request('DELETE', `/v1/account/api-keys/${alice.apiKey.slice(0, 12)}`, { apiKey: bob.apiKey });
    expect(res.status).toBe(404);
    expect(res.body.error).toBe('API_KEY_NOT_FOUND');
    expect((await t.request('GET', '/v1/account', { apiKey: alice.apiKey })).status).toBe(200);
  });

  it('names the job and batch behind each PDFGEN and REFUND, and filters by type and batch', async () => {
    const { apiKey } = await t.createAccount({ credits: 10 });
    const template = await t.request('POST', '/v1/templates', {
      apiKey,
      body: { name: 'Letter', html: '<p>{{ name }}</p>' },
    });
    const templateId = template.body.id as string;
    const job = await t.request('POST', '/v1/pdf/create-async', {
      apiKey,
      body: { template_id: templateId, data: { name: 'Ada' } },
    });
    expect(job.status).toBe(200);
    const batch = await t.request('POST', '/v1/pdf/batches', {
      apiKey,
      body: {
        template_id: templateId,
        items: [{ data: { name: 'A' } }, { data: { name: 'B' } }, { data: { name: 'C' } }],
      },
    });
    expect(batch.status, JSON.stringify(batch.body)).toBe(202);
    const batchId = batch.body.batch_id as string;
    const cancelled = await t.request('POST', `/v1/pdf/batches/${batchId}/cancel`, { apiKey });
    expect(cancelled.status).toBe(200);
    // A cancel refunds the unstarted items after its answer, a chunk at a time.
    await expect
      .poll(async () => (await t.request('GET', '/v1/account/transactions?type=REFUND', { apiKey })).body.total)
      .toBe(3);

    const all = await t.request('GET', '/v1/account/transactions', { apiKey });
    const transactions = all.body.transactions as Record<string, unknown>[];
    const refunds = transactions.filter((x) => x.transaction_type === 'REFUND');
    expect(refunds).toHaveLength(3);
    for (const refund of refunds) {
      // TemplateFox's fields as they were: a REFUND has no template_id of its own.
      expect(refund).toMatchObject({
        template_id: null,
        batch_id: batchId,
        job_id: expect.any(String),
        refunds: { transaction_ref: expect.any(String), template_id: templateId, tool: null },
      });
      const paid = transactions.find(
        (x) => x.transaction_ref === (refund.refunds as { transaction_ref: string }).transaction_ref,
      );
      expect(paid).toMatchObject({
        transaction_type: 'PDFGEN',
        template_id: templateId,
        job_id: refund.job_id,
        batch_id: batchId,
        refunds: null,
      });
    }
    expect(transactions.find((x) => x.job_id === job.body.job_id)).toMatchObject({
      transaction_type: 'PDFGEN',
      batch_id: null,
    });
    expect(transactions.find((x) => x.transaction_type === 'BONUS')).toMatchObject({
      job_id: null,
      batch_id: null,
      refunds: null,
    });

    const onlyRefunds = await t.request('GET', '/v1/account/transactions?type=REFUND', { apiKey });
    expect(onlyRefunds.body.total).toBe(3);
    expect(
      (onlyRefunds.body.transactions as { transaction_type: string }[]).every((x) => x.transaction_type === 'REFUND'),
    ).toBe(true);
    const ofBatch = await t.request('GET', `/v1/account/transactions?batch_id=${batchId}`, { apiKey });
    expect(ofBatch.body.total).toBe(6);
    const refundsOfBatch = await t.request('GET', `/v1/account/transactions?batch_id=${batchId}&type=REFUND&limit=2`, {
      apiKey,
    });
    expect(refundsOfBatch.body).toMatchObject({ total: 3, limit: 2 });
    expect(refundsOfBatch.body.transactions).toHaveLength(2);

    // Another account's batch id matches nothing; a bad type is a 422 in the FastAPI shape.
    const other = await t.createAccount({});
    expect(
      (await t.request('GET', `/v1/account/transactions?batch_id=${batchId}`, { apiKey: other.apiKey })).body,
    ).toMatchObject({ total: 0, transactions: [] });
    const bad = await t.request('GET', '/v1/account/transactions?type=GIFT', { apiKey });
    expect(bad.status).toBe(422);
    expect(bad.body.detail[0].loc).toEqual(['query', 'type']);

    // TemplateFox's Go SDK gets its own fields only.
    const goClient = await t.request('GET', '/v1/account/transactions?limit=1', {
      apiKey,
      headers: { 'user-agent': 'OpenAPI-Generator/1.0.0/go' },
    });
    expect(Object.keys(goClient.body.transactions[0]).sort()).toEqual([
      'created_at',
      'credits',
      'exec_tm',
      'template_id',
      'transaction_ref',
      'transaction_type',
    ]);
  });
});

describe('what this installation can do (GET /v1/capabilities)', { timeout: INSTALL_TIMEOUT_MS }, () => {
  it('says validation is not available without the rules pack, and whether time-stamps need your own authority', async () => {
    const bare = await startTestApp('sqlite');
    try {
      const { apiKey } = await bare.createAccount({});
      expect((await bare.request('GET', '/v1/capabilities')).status).toBe(401);
      const res = await bare.request('GET', '/v1/capabilities', { apiKey });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        einvoice_validation: { available: false, reason: 'rules_not_installed' },
        einvoice_attachments: { available: true, official_rules: false },
        signature_timestamps: { service_authority: false },
      });
    } finally {
      await bare.close();
    }
    const required = await startTestApp('sqlite', {
      PRESSROOM_EINVOICE_RULES: 'required',
      PRESSROOM_TSA_URL: 'https://tsa.example.com/',
    });
    try {
      const { apiKey } = await required.createAccount({});
      expect((await required.request('GET', '/v1/capabilities', { apiKey })).body).toEqual({
        einvoice_validation: { available: false, reason: 'rules_not_installed' },
        einvoice_attachments: { available: false, official_rules: false },
        signature_timestamps: { service_authority: true },
      });
    } finally {
      await required.close();
    }
    const off = await startTestApp('sqlite', { PRESSROOM_EINVOICE_RULES: 'off' });
    try {
      const { apiKey } = await off.createAccount({});
      expect((await off.request('GET', '/v1/capabilities', { apiKey })).body.einvoice_validation).toEqual({
        available: false,
        reason: 'rules_off',
      });
    } finally {
      await off.close();
    }
  });

  it.skipIf(!HAS_SHARED_RULES)('says validation is available once the operator installed the rules', async () => {
    const t = await startTestApp('sqlite');
    try {
      await installRulesPack(t.config.dataDir);
      const { apiKey } = await t.createAccount({});
      expect((await t.request('GET', '/v1/capabilities', { apiKey })).body).toMatchObject({
        einvoice_validation: { available: true },
        einvoice_attachments: { available: true, official_rules: true },
      });
    } finally {
      await t.close();
    }
  });
});

describe('the fields of unsaved text (POST /v1/templates/fields)', () => {
  it('infers them without saving, refuses text that does not parse at its line, and bounds the answer', async () => {
    const t = await startTestApp('sqlite');
    try {
      const { apiKey } = await t.createAccount({});
      const res = await t.request('POST', '/v1/templates/fields', {
        apiKey,
        body: {
          html: '<p>{{ customer.name }}</p>{% for i in items %}{{ i.qty * 2 }}{% endfor %}',
          page: { footer_html: '{{ page_note }}' },
          sample_data: { customer: { name: 'Ada' } },
        },
      });
      expect(res.status).toBe(200);
      expect(res.body.fields).toEqual([
        {
          key: 'customer.name',
          label: 'Customer name',
          type: 'string',
          required: true,
          helpText: 'Example: Ada',
          spec: null,
        },
        {
          key: 'items',
          label: 'Items',
          type: 'array',
          required: true,
          helpText: null,
          spec: [{ name: 'qty', label: 'Qty', type: 'number' }],
        },
        { key: 'page_note', label: 'Page note', type: 'string', required: true, helpText: null, spec: null },
      ]);
      expect((await t.request('GET', '/v1/templates', { apiKey })).body.templates).toEqual([]);
      const broken = await t.request('POST', '/v1/templates/fields', {
        apiKey,
        body: { html: '<p>ok</p>\n<p>{{ broken </p>' },
      });
      expect(broken.status).toBe(422);
      expect(broken.body.detail[0]).toMatchObject({ loc: ['body', 'html'] });
      const many = await t.request('POST', '/v1/templates/fields', {
        apiKey,
        body: { html: Array.from({ length: 501 }, (_, i) => `{{ v${i} }}`).join('') },
      });
      expect(many.status).toBe(422);
      expect(many.body.detail[0]).toMatchObject({ type: 'too_many_fields' });
      expect((await t.request('POST', '/v1/templates/fields', { body: { html: '{{ a }}' } })).status).toBe(401);
    } finally {
      await t.close();
    }
  });
});
