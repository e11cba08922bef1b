/**
 * Whoever reads the logs must not be able to fetch the documents: a signed download link is logged
 * (Fastify's `incoming request` line carries `req.url`) with its path but without its signature, and
 * tokens in other URLs (a webhook URL, a query `access_token`) do not reach the log either. Real HTTP,
 * real Chromium, the service's own logger capturing every line; SQLite only, the rule is not about the
 * database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, until, type TestApp } from '../../support/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

describe('log lines keep URL paths and drop URL credentials', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let apiKey: string;
  let templateId: string;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    t = await startTestApp(
      'sqlite',
      { PRESSROOM_JOB_POLL_MS: '100', PRESSROOM_RENDER_CONCURRENCY: '1' },
      { captureLogs: true },
    );
    ({ apiKey } = await t.createAccount({ credits: 10, plan: 'enterprise' }));
    templateId = (
      await t.request('POST', '/v1/templates', { apiKey, body: { name: 'Hello', html: '<h1>Hello {{ name }}</h1>' } })
    ).body.id;
    t.services.startWorkers();
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('logs the download of a signed link with its path and without its signature', async () => {
    const created = await t.request('POST', '/v1/pdf/create', {
      apiKey,
      body: { template_id: templateId, data: { name: 'Ada' } },
    });
    expect(created.status).toBe(200);
    const link = new URL(created.body.url);
    const signature = link.searchParams.get('signature')!;
    expect(signature.length).toBeGreaterThan(10);

    const download = await t.request('GET', `${link.pathname}${link.search}`);
    expect(download.status).toBe(200);
    await until(
      async () =>
        t.logs.some(
          (l) => l.includes('"request completed"') && l.includes(`"req_id":"${download.headers.get('x-request-id')}"`),
        ),
      5000,
      'the download to be logged',
    );

    const incoming = t.logs
      .map((l) => JSON.parse(l) as { msg: string; req?: { url: string } })
      .filter((l) => l.msg === 'incoming request' && l.req?.url.startsWith(link.pathname));
    expect(incoming).toHaveLength(1);
    expect(incoming[0]!.req!.url).toBe(
      `${link.pathname}?expires=${link.searchParams.get('expires')}&signature=[redacted]`,
    );
    expect(t.logs.filter((l) => l.includes(signature))).toEqual([]);
  });

  it('keeps tokens of webhook URLs and of query strings out of the log', async () => {
    const hookToken = 'hook-token-0123456789abcdef';
    const accepted = await t.request('POST', '/v1/pdf/create-async', {
      apiKey,
      body: { template_id: templateId, data: { name: 'Queued' }, webhook_url: `${receiver.url}?token=${hookToken}` },
    });
    expect(accepted.status).toBe(200);
    const jobId = accepted.body.job_id as string;
    await receiver.waitFor(1, (h) => h.json?.job_id === jobId, 60_000);
    await until(
      async () => t.logs.some((l) => l.includes('"webhook delivered"') && l.includes(jobId)),
      10_000,
      'the delivery log line',
    );

    const accessToken = 'query-access-token-0123456789';
    expect(
      (await t.request('GET', `/v1/account?access_token=${accessToken}&X-Amz-Signature=amz-sig-0123456789`, { apiKey }))
        .status,
    ).toBe(200);
    await until(
      async () =>
        t.logs.some(
          (l) =>
            l.includes('"incoming request"') &&
            l.includes('/v1/account?access_token=[redacted]&X-Amz-Signature=[redacted]'),
        ),
      5000,
      'the redacted request line',
    );

    for (const secret of [hookToken, accessToken, 'amz-sig-0123456789'])
      expect(t.logs.filter((l) => l.includes(secret))).toEqual([]);
  });
});
