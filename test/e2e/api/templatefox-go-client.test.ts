/**
 * TemplateFox's Go SDK fails a call on any property its model does not list (DisallowUnknownFields in
 * each generated model's UnmarshalJSON). Answers to a client that says it is that SDK
 * (`User-Agent: OpenAPI-Generator/<version>/go`) keep to TemplateFox's properties; the warnings of a
 * document then come in the headers. Every other client gets Pressroom's additions too. The property
 * lists below are the Go SDK's models (model_account_info_response.go, model_create_pdf_response.go,
 * model_job_status_response.go, model_create_image_response.go, model_template_layers_response.go,
 * model_template_layer.go, model_pdf_tools_response.go, model_transactions_response.go,
 * model_transaction.go). SQLite only: the answers' shape does not
 * depend on the database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, until, type TestApp } from '../../support/test-app.js';

const GO_SDK = { 'user-agent': 'OpenAPI-Generator/1.13.0/go' };
const ACCOUNT_INFO = ['credits', 'email'];
const CREATE_PDF = ['credits_remaining', 'expires_in', 'filename', 'url'];
const JOB_STATUS = [
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
];
const CREATE_IMAGE = ['credits_remaining', 'expires_in', 'filename', 'url', 'warnings'];
const TEMPLATE_LAYERS = ['layers', 'warnings'];
const TEMPLATE_LAYER = ['current_text', 'modifiable', 'name', 'tag', 'type'];
const PDF_TOOLS = ['credits_remaining', 'expires_in', 'filename', 'url'];
const TRANSACTIONS = ['limit', 'offset', 'total', 'transactions'];
const TRANSACTION = ['created_at', 'credits', 'exec_tm', 'template_id', 'transaction_ref', 'transaction_type'];
const within = (keys: string[], allowed: string[]) => keys.filter((k) => !allowed.includes(k));

describe('answers to TemplateFox’s Go SDK', () => {
  let t: TestApp;
  let apiKey: string;
  let templateId: string;

  beforeAll(async () => {
    t = await startTestApp('sqlite', { PRESSROOM_JOB_POLL_MS: '100' });
    t.services.startWorkers();
    apiKey = (await t.createAccount({ credits: 10, plan: 'pro' })).apiKey;
    // `nickname` is printed and not sent: every generation has an UNDEFINED_VARIABLE warning.
    const created = await t.request('POST', '/v1/templates', {
      apiKey,
      body: { name: 'Go client', html: '<p>{{ name }} {{ nickname }}</p>' },
    });
    templateId = created.body.id;
  });
  afterAll(async () => t?.close());

  it('the account, a PDF link and a job carry only the properties the SDK’s models list; the warnings come as headers', async () => {
    const account = await t.request('GET', '/v1/account', { apiKey, headers: GO_SDK });
    expect(Object.keys(account.body).sort()).toEqual(ACCOUNT_INFO);

    const pdf = await t.request('POST', '/v1/pdf/create', {
      apiKey,
      headers: GO_SDK,
      body: { template_id: templateId, data: { name: 'Ada' } },
    });
    expect(pdf.status).toBe(200);
    expect(Object.keys(pdf.body).sort()).toEqual(CREATE_PDF);
    expect(Number(pdf.headers.get('x-pressroom-warnings'))).toBeGreaterThan(0);
    expect(JSON.parse(pdf.headers.get('x-pressroom-warning-details')!)).toEqual(
      expect.arrayContaining([expect.objectContaining({ code: 'UNDEFINED_VARIABLE' })]),
    );

    const accepted = await t.request('POST', '/v1/pdf/create-async', {
      apiKey,
      headers: GO_SDK,
      body: { template_id: templateId, data: { name: 'Ada' } },
    });
    expect(accepted.status).toBe(200);
    const job = await until(
      async () => {
        const res = await t.request('GET', `/v1/pdf/jobs/${accepted.body.job_id}`, { apiKey, headers: GO_SDK });
        return res.body.status === 'completed' ? res.body : undefined;
      },
      120_000,
      'the job to complete',
    );
    expect(within(Object.keys(job), JOB_STATUS)).toEqual([]);
    const list = await t.request('GET', '/v1/pdf/jobs', { apiKey, headers: GO_SDK });
    for (const item of list.body.jobs as Record<string, unknown>[])
      expect(within(Object.keys(item), JOB_STATUS)).toEqual([]);
  });

  it("an image, a template's layers and a PDF tool answer with only the properties the SDK's models list", async () => {
    const html = '<h1 data-layer="title">{{ title }}</h1>';
    const image = await t.request('POST', '/v1/templates', {
      apiKey,
      body: { name: 'Card', html, kind: 'image', canvas: { width: 200, height: 100 } },
    });
    expect(image.status).toBe(201);

    const layers = await t.request('GET', `/v1/templates/${image.body.id}/layers`, { apiKey, headers: GO_SDK });
    expect(layers.status).toBe(200);
    expect(within(Object.keys(layers.body), TEMPLATE_LAYERS)).toEqual([]);
    expect((layers.body.layers as { name: string }[]).map((layer) => layer.name)).toContain('title');
    for (const layer of layers.body.layers as Record<string, unknown>[])
      expect(within(Object.keys(layer), TEMPLATE_LAYER)).toEqual([]);

    // An unknown layer gives a warning, which the SDK's image model lists (as strings).
    const created = await t.request('POST', '/v1/image/create', {
      apiKey,
      headers: GO_SDK,
      body: {
        template_id: image.body.id,
        data: { title: 'Card' },
        modifications: [
          { name: 'title', text: 'Hi' },
          { name: 'ghost', text: 'x' },
        ],
      },
    });
    expect(created.status).toBe(200);
    expect(within(Object.keys(created.body), CREATE_IMAGE)).toEqual([]);
    expect(created.body.warnings).toEqual([expect.stringContaining('ghost')]);

    const pdf = await t.request('POST', '/v1/pdf/create', {
      apiKey,
      body: { template_id: templateId, data: { name: 'Ada' }, export_type: 'binary' },
    });
    expect(pdf.status).toBe(200);
    const pdfBase64 = pdf.bytes.toString('base64');
    const merged = await t.request('POST', '/v1/pdf-tools/merge', {
      apiKey,
      headers: GO_SDK,
      body: { pdfs: [{ pdf_base64: pdfBase64 }, { pdf_base64: pdfBase64 }] },
    });
    expect(merged.status).toBe(200);
    expect(Object.keys(merged.body).sort()).toEqual(PDF_TOOLS);

    // The transactions, the merge's charge among them: the SDK's Transaction has no `tool`.
    const transactions = await t.request('GET', '/v1/account/transactions', { apiKey, headers: GO_SDK });
    expect(within(Object.keys(transactions.body), TRANSACTIONS)).toEqual([]);
    for (const item of transactions.body.transactions as Record<string, unknown>[])
      expect(within(Object.keys(item), TRANSACTION)).toEqual([]);
    const mine = await t.request('GET', '/v1/account/transactions', { apiKey });
    expect(mine.body.transactions[0]).toMatchObject({ transaction_type: 'PDFGEN', template_id: null, tool: 'merge' });
  });

  it('any other client gets Pressroom’s additions: warnings in the body, the account’s id and plan, the job’s version', async () => {
    const account = await t.request('GET', '/v1/account', { apiKey });
    expect(account.body).toMatchObject({ account_id: expect.any(String), plan: 'pro' });
    const pdf = await t.request('POST', '/v1/pdf/create', {
      apiKey,
      body: { template_id: templateId, data: { name: 'Ada' } },
    });
    expect(pdf.body.warnings).toEqual(
      expect.arrayContaining([expect.objectContaining({ code: 'UNDEFINED_VARIABLE' })]),
    );
    const list = await t.request('GET', '/v1/pdf/jobs', { apiKey });
    expect(list.body.jobs[0]).toHaveProperty('version');
    expect(list.body.jobs[0].warnings).toEqual(
      expect.arrayContaining([expect.objectContaining({ code: 'UNDEFINED_VARIABLE' })]),
    );
  });
});
