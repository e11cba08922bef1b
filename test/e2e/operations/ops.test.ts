/**
 * Operations endpoints and request ids (issue 7), in process over real HTTP, on SQLite and PostgreSQL:
 * /healthz; /readyz with its database, storage, browser and Redis checks (Redis down is "degraded",
 * still ready; storage down is not ready); /metrics in Prometheus text with route patterns, renders,
 * credits, queue depth (per account too), webhook outcomes and default process metrics, public or behind
 * PRESSROOM_METRICS_TOKEN; and a create-async request id that follows the job into the worker's log
 * lines and the webhook's `x-request-id`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../../support/databases.js';
import { freePort, startTestApp, until, type TestApp } from '../../support/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

/** The value of one sample line of a Prometheus text exposition, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe.each(DIALECTS)('operations on %s', (dialect) => {
  let t: TestApp;
  let receiver: WebhookReceiver;
  let apiKey: string;
  let accountId: string;
  let templateId: string;
  const metrics = async () => {
    const res = await t.request('GET', '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    return res.body as string;
  };

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    t = await startTestApp(
      dialect,
      { PRESSROOM_JOB_POLL_MS: '100', PRESSROOM_RENDER_CONCURRENCY: '1' },
      { captureLogs: true },
    );
    ({ apiKey, accountId } = await t.createAccount({ credits: 10, plan: 'enterprise' }));
    templateId = (
      await t.request('POST', '/v1/templates', {
        apiKey,
        body: { name: 'Hello', html: '<h1>Hello {{ name }}</h1>{% if boom %}{{ boom() }}{% endif %}' },
      })
    ).body.id;
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it('says alive at /healthz, and ready at /readyz only once the browser is up', async () => {
    expect((await t.request('GET', '/healthz')).body).toEqual({ status: 'ok' });
    const starting = await t.request('GET', '/readyz');
    expect(starting.status).toBe(503);
    expect(starting.body).toEqual({
      status: 'not_ready',
      checks: { database: 'ok', storage: 'ok', renderer: 'starting' },
    });
    await t.services.renderer.warmUp();
    const ready = await t.request('GET', '/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: 'ready', checks: { database: 'ok', storage: 'ok', renderer: 'ok' } });
  });

  it('counts requests by route pattern and status, renders, credits and the queue, with default process metrics', async () => {
    await t.services.stopWorkers();
    const templates = await Promise.all([
      t.request('GET', '/v1/templates/abcdefghijkl', { apiKey }),
      t.request('GET', '/v1/templates/bcdefghijklm', { apiKey }),
    ]);
    expect(templates.map((r) => r.status)).toEqual([404, 404]);
    expect(
      (await t.request('POST', '/v1/pdf/create', { apiKey, body: { template_id: templateId, data: { name: 'Ada' } } }))
        .status,
    ).toBe(200);
    // A render error: counted with its code, and its credit refunded.
    expect(
      (
        await t.request('POST', '/v1/pdf/create', {
          apiKey,
          body: { template_id: templateId, data: { name: 'Ada', boom: 1 } },
        })
      ).status,
    ).toBe(422);
    for (let i = 0; i < 3; i++) {
      expect(
        (
          await t.request('POST', '/v1/pdf/create-async', {
            apiKey,
            body: { template_id: templateId, data: { name: `Queued ${i}` } },
          })
        ).status,
      ).toBe(200);
    }
    // The oldest pending job must be at least a second old for its age gauge to show it.
    const text = await until(
      async () => {
        const scraped = await metrics();
        return (sample(scraped, 'pressroom_jobs_oldest_pending_age_seconds') ?? 0) >= 1 && scraped;
      },
      60_000,
      'the oldest pending job to be a second old',
    );
    expect(
      sample(text, 'pressroom_http_requests_total{method="GET",route="/v1/templates/:template_id",status="404"}'),
    ).toBe(2);
    expect(text).not.toContain('abcdefghijkl');
    expect(sample(text, 'pressroom_http_requests_total{method="POST",route="/v1/pdf/create",status="200"}')).toBe(1);
    expect(sample(text, 'pressroom_http_requests_total{method="POST",route="/v1/pdf/create",status="422"}')).toBe(1);
    expect(
      sample(text, 'pressroom_http_request_duration_seconds_count{method="POST",route="/v1/pdf/create-async"}'),
    ).toBe(3);
    expect(sample(text, 'pressroom_renders_total{kind="document",outcome="ok"}')).toBe(1);
    expect(sample(text, 'pressroom_renders_total{kind="document",outcome="template_render_error"}')).toBe(1);
    expect(sample(text, 'pressroom_render_duration_seconds_count{kind="document"}')).toBe(1);
    expect(sample(text, 'pressroom_render_duration_seconds_bucket{le="+Inf",kind="document"}')).toBe(1);
    expect(sample(text, 'pressroom_credits_consumed_total')).toBe(5);
    expect(sample(text, 'pressroom_credits_refunded_total')).toBe(1);
    expect(sample(text, 'pressroom_credits_granted_total{type="BONUS"}')).toBe(10);
    expect(sample(text, 'pressroom_jobs_queued{status="pending"}')).toBe(3);
    expect(sample(text, 'pressroom_jobs_queued{status="processing"}')).toBe(0);
    expect(sample(text, `pressroom_jobs_pending_by_account{account_id="${accountId}"}`)).toBe(3);
    expect(sample(text, 'pressroom_jobs_oldest_pending_age_seconds')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'pressroom_database_up')).toBe(1);
    expect(sample(text, 'pressroom_browser_launches_total')).toBe(1);
    expect(sample(text, 'pressroom_browser_restarts_total')).toBe(0);
    expect(sample(text, 'pressroom_browser_ready')).toBe(1);
    expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(sample(text, 'nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);
    expect(text).not.toContain('pressroom_redis_up');

    // Workers on: the queue drains and the gauges follow.
    t.services.startWorkers();
    await until(
      async () =>
        sample(await metrics(), 'pressroom_jobs_queued{status="pending"}') === 0 &&
        sample(await metrics(), 'pressroom_jobs_queued{status="processing"}') === 0,
      60_000,
      'the queue to drain',
    );
    const drained = await metrics();
    expect(sample(drained, 'pressroom_jobs_oldest_pending_age_seconds')).toBe(0);
    expect(drained).not.toContain('pressroom_jobs_pending_by_account{');
    expect(sample(drained, 'pressroom_job_attempts_total{outcome="completed"}')).toBe(3);
  });

  it('follows a create-async request id into the worker log lines and the webhook', async () => {
    const requestId = `ops-test-${dialect}-0001`;
    const accepted = await t.request('POST', '/v1/pdf/create-async', {
      apiKey,
      headers: { 'x-request-id': requestId },
      body: { template_id: templateId, data: { name: 'Traced' }, webhook_url: receiver.url },
    });
    expect(accepted.status).toBe(200);
    const jobId = accepted.body.job_id as string;
    const [hook] = await receiver.waitFor(1, (h) => h.json?.job_id === jobId, 60_000);
    expect(hook!.headers['x-request-id']).toBe(requestId);
    const row = await t.services.database.db
      .selectFrom('jobs')
      .select('request_id')
      .where('id', '=', jobId)
      .executeTakeFirstOrThrow();
    expect(row.request_id).toBe(requestId);
    const deliveryRow = await t.services.database.db
      .selectFrom('webhook_deliveries')
      .select('request_id')
      .where('job_id', '=', jobId)
      .executeTakeFirstOrThrow();
    expect(deliveryRow.request_id).toBe(requestId);

    await until(
      async () => t.logs.some((l) => l.includes('"webhook delivered"') && l.includes(jobId)),
      5000,
      'the delivery log line',
    );
    const lines = t.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    const traced = lines.filter((l) => l.req_id === requestId);
    const messages = traced.map((l) => l.msg);
    expect(messages).toEqual(
      expect.arrayContaining(['incoming request', 'request completed', 'job completed', 'webhook delivered']),
    );
    // Each line carries the id once (no duplicate key from the request logger).
    for (const raw of t.logs.filter((l) => l.includes(requestId))) expect(raw.match(/"req_id"/g)).toHaveLength(1);
    expect(sample(await metrics(), 'pressroom_webhook_deliveries_total{outcome="delivered"}')).toBe(1);
  });

  it('tags domain log lines of a synchronous request with its id (the refund after a failed render)', async () => {
    const requestId = `ops-sync-${dialect}-0002`;
    const res = await t.request('POST', '/v1/pdf/create', {
      apiKey,
      headers: { 'x-request-id': requestId },
      body: { template_id: templateId, data: { boom: 1 } },
    });
    expect(res.status).toBe(422);
    // One line per generation, with account, template, outcome and duration; its credit was voided.
    const generationLine = t.logs
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'generation' && l.req_id === requestId);
    expect(generationLine).toMatchObject({
      templateId,
      outcome: 'TEMPLATE_RENDER_ERROR',
      charged: 0,
      accountId: expect.stringMatching(/^acc_/),
      durationMs: expect.any(Number),
    });
  });
});

describe('readiness when a dependency is down', () => {
  let t: TestApp | undefined;
  afterAll(async () => t?.close());

  it('is not ready when the storage cannot be reached, and stays ready (degraded) without Redis', async () => {
    const closedPort = await freePort();
    const redisPort = await freePort();
    t = await startTestApp('sqlite', {
      PRESSROOM_STORAGE_URL: `s3://nowhere/p?endpoint=http://127.0.0.1:${closedPort}&access_key_id=AKIAEXAMPLE0001&secret_access_key=secret0123456789abcdef&force_path_style=true`,
      PRESSROOM_REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    });
    await t.services.renderer.warmUp();
    const res = await t.request('GET', '/readyz');
    expect(res.status).toBe(503);
    expect(res.body.status).toBe('not_ready');
    expect(res.body.checks).toMatchObject({
      database: 'ok',
      renderer: 'ok',
      storage: expect.stringMatching(/^unavailable: /),
      redis: expect.stringMatching(/^degraded: /),
    });
    expect(JSON.stringify(res.body)).not.toContain(String(closedPort));
    const text = (await t.request('GET', '/metrics')).body as string;
    expect(sample(text, 'pressroom_redis_up')).toBe(0);
  });
});

describe('GET /metrics with PRESSROOM_METRICS_TOKEN', () => {
  let t: TestApp | undefined;
  afterAll(async () => t?.close());

  it('answers 401 without the bearer token and the metrics with it', async () => {
    t = await startTestApp('sqlite', { PRESSROOM_METRICS_TOKEN: METRICS_TOKEN });
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Bearer wrong-token-0123456789abcdef' },
      { authorization: `Basic ${METRICS_TOKEN}` },
    ];
    for (const headers of attempts) {
      const refused = await t.request('GET', '/metrics', { headers });
      expect(refused.status).toBe(401);
      expect(refused.body).toMatchObject({
        error: 'UNAUTHORIZED',
        message: expect.stringContaining('PRESSROOM_METRICS_TOKEN'),
      });
    }
    const ok = await t.request('GET', '/metrics', { bearer: METRICS_TOKEN });
    expect(ok.status).toBe(200);
    expect(ok.body).toContain('# TYPE pressroom_http_requests_total counter');
    expect(ok.body).toMatch(/^pressroom_http_requests_total\{method="GET",route="\/metrics",status="401"\} 3$/m);
  });
});
