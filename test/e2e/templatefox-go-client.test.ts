/**
 * TemplateFox's Go SDK fails a call on any property its model does not list (DisallowUnknownFields in
 * each generated model's UnmarshalJSON). Answers to a client that says it is that SDK
 * (`User-Agent: OpenAPI-Generator/<version>/go`) keep to TemplateFox's properties; the warnings of a
 * document then come in the headers. Every other client gets Pressroom's additions too. The property
 * lists below are the Go SDK's models (model_account_info_response.go, model_create_pdf_response.go,
 * model_job_status_response.go). SQLite only: the answers' shape does not depend on the database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, until, type TestApp } from '../support/test-app.js';

const GO_SDK = { 'user-agent': 'OpenAPI-Generator/1.13.0/go' };
const ACCOUNT_INFO = ['credits', 'email'];
const CREATE_PDF = ['credits_remaining', 'expires_in', 'filename', 'url'];
const JOB_STATUS = ['completed_at', 'created_at', 'error_code', 'error_message', 'export_type', 'filename', 'id', 'result_expires_at', 'result_filename', 'result_s3_bucket', 'result_s3_key', 'result_url', 'status', 'store_s3', 'template_id', 'updated_at'];
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
    const created = await t.request('POST', '/v1/templates', { apiKey, body: { name: 'Go client', html: '<p>{{ name }} {{ nickname }}</p>' } });
    templateId = created.body.id;
  });
  afterAll(async () => t?.close());

  it('the account, a PDF link and a job carry only the properties the SDK’s models list; the warnings come as headers', async () => {
    const account = await t.request('GET', '/v1/account', { apiKey, headers: GO_SDK });
    expect(Object.keys(account.body).sort()).toEqual(ACCOUNT_INFO);

    const pdf = await t.request('POST', '/v1/pdf/create', { apiKey, headers: GO_SDK, body: { template_id: templateId, data: { name: 'Ada' } } });
    expect(pdf.status).toBe(200);
    expect(Object.keys(pdf.body).sort()).toEqual(CREATE_PDF);
    expect(Number(pdf.headers.get('x-pressroom-warnings'))).toBeGreaterThan(0);
    expect(JSON.parse(pdf.headers.get('x-pressroom-warning-details')!)).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'UNDEFINED_VARIABLE' })]));

    const accepted = await t.request('POST', '/v1/pdf/create-async', { apiKey, headers: GO_SDK, body: { template_id: templateId, data: { name: 'Ada' } } });
    expect(accepted.status).toBe(200);
    const job = await until(async () => {
      const res = await t.request('GET', `/v1/pdf/jobs/${accepted.body.job_id}`, { apiKey, headers: GO_SDK });
      return res.body.status === 'completed' ? res.body : undefined;
    }, 120_000, 'the job to complete');
    expect(within(Object.keys(job), JOB_STATUS)).toEqual([]);
    const list = await t.request('GET', '/v1/pdf/jobs', { apiKey, headers: GO_SDK });
    for (const item of list.body.jobs as Record<string, unknown>[]) expect(within(Object.keys(item), JOB_STATUS)).toEqual([]);
  });

  it('any other client gets Pressroom’s additions: warnings in the body, the account’s id and plan, the job’s version', async () => {
    const account = await t.request('GET', '/v1/account', { apiKey });
    expect(account.body).toMatchObject({ account_id: expect.any(String), plan: 'pro' });
    const pdf = await t.request('POST', '/v1/pdf/create', { apiKey, body: { template_id: templateId, data: { name: 'Ada' } } });
    expect(pdf.body.warnings).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'UNDEFINED_VARIABLE' })]));
    const list = await t.request('GET', '/v1/pdf/jobs', { apiKey });
    expect(list.body.jobs[0]).toHaveProperty('version');
    expect(list.body.jobs[0].warnings).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'UNDEFINED_VARIABLE' })]));
  });
});
