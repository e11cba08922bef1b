/**
 * Multi-process mode (issue 7), with real processes from dist/: two `serve --role api` and one
 * `serve --role worker` on one PostgreSQL schema, Redis for rate limits and the loopback,
 * signature-verifying S3 server as the CDN storage.
 * - a download link made by one API process is a presigned S3 URL that works for anyone; a replay on
 *   the other API process links the same file;
 * - a job accepted by one API process is rendered by the worker and read from the other; its request
 *   id follows it into the worker's logs and the webhook's `x-request-id`;
 * - rate limits are exact across API processes;
 * - every process answers /readyz and /metrics (the worker on its ops-only port).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfText } from '../../support/documents/pdf-tools.js';
import { startCluster, until, httpRequest, type Cluster } from '../../support/cluster.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

const INVOICE = '<h1>Invoice {{ number }}</h1><p>{{ customer }}</p>';

// Real processes, each with its own Chromium: deadlines sized for a busy 2-core machine.
describe('two API processes and a worker on PostgreSQL, Redis and S3', { timeout: 180_000 }, () => {
  let cluster: Cluster;
  let receiver: WebhookReceiver;
  let apiKey: string;
  let templateId: string;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    cluster = await startCluster({
      apis: 2,
      workers: 1,
      redisUrl: 'redis://127.0.0.1:6379',
      env: { PRESSROOM_JOB_POLL_MS: '200', PRESSROOM_RENDER_CONCURRENCY: '1' },
    });
    ({ apiKey } = await cluster.createAccount({ credits: 20, plan: 'enterprise' }));
    templateId = (
      await cluster.apis[0]!.request('POST', '/v1/templates', { apiKey, body: { name: 'Invoice', html: INVOICE } })
    ).body.id;
  }, 240_000);
  afterAll(async () => {
    await cluster?.close();
    await receiver?.close();
  });

  it('serves a download link made by one API process to anyone, as a presigned S3 URL, and the other process links the same file', async () => {
    const [a, b] = cluster.apis as [(typeof cluster.apis)[0], (typeof cluster.apis)[0]];
    const body = { template_id: templateId, data: { number: 'INV-7', customer: 'Grace Hopper' }, filename: 'inv-7' };
    const made = await a.request('POST', '/v1/pdf/create', {
      apiKey,
      body,
      headers: { 'idempotency-key': 'cluster-link-1' },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const url = new URL(made.body.url);
    expect(url.origin).toBe(cluster.s3!.endpoint);
    expect(url.pathname).toMatch(/^\/pressroom-files\/generated\/acc_[^/]+\/[^/]+\.pdf$/);
    expect(url.searchParams.get('X-Amz-Signature')).toMatch(/^[0-9a-f]{64}$/);

    const download = await httpRequest('', 'GET', made.body.url);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-disposition')).toContain('inv-7.pdf');
    expect(pdfText(download.bytes)).toContain('Grace Hopper');
    // The bucket checks the signature: a changed one is refused.
    url.searchParams.set('X-Amz-Signature', '0'.repeat(64));
    expect((await httpRequest('', 'GET', url.toString())).status).toBe(403);

    // The same request on the other process: the stored answer, relinked to the same object.
    const replay = await b.request('POST', '/v1/pdf/create', {
      apiKey,
      body,
      headers: { 'idempotency-key': 'cluster-link-1' },
    });
    expect(replay.status).toBe(200);
    expect(replay.body.credits_remaining).toBe(made.body.credits_remaining);
    expect(new URL(replay.body.url).pathname).toBe(new URL(made.body.url).pathname);
    expect((await httpRequest('', 'GET', replay.body.url)).bytes.equals(download.bytes)).toBe(true);
  });

  it('renders a job accepted by one API process in the worker process, shows it on the other, and carries the request id to the webhook', async () => {
    const [a, b] = cluster.apis as [(typeof cluster.apis)[0], (typeof cluster.apis)[0]];
    const worker = cluster.workers[0]!;
    const requestId = `cluster-req-${Date.now()}`;
    const accepted = await a.request('POST', '/v1/pdf/create-async', {
      apiKey,
      headers: { 'x-request-id': requestId },
      body: {
        template_id: templateId,
        data: { number: 'JOB-1', customer: 'Katherine Johnson' },
        webhook_url: receiver.url,
      },
    });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    expect(accepted.headers.get('x-request-id')).toBe(requestId);
    const jobId = accepted.body.job_id as string;

    const job = await until(
      async () => {
        const res = await b.request('GET', `/v1/pdf/jobs/${jobId}`, { apiKey });
        return res.body.status === 'completed' && res.body;
      },
      120_000,
      'the job to complete',
    );
    expect(new URL(job.result_url).origin).toBe(cluster.s3!.endpoint);
    expect(pdfText((await httpRequest('', 'GET', job.result_url)).bytes)).toContain('Katherine Johnson');

    const [hook] = await receiver.waitFor(1, (h) => h.json?.job_id === jobId);
    expect(hook!.headers['x-request-id']).toBe(requestId);
    expect(hook!.json.result.url).toBe(job.result_url);

    const row = await cluster.db
      .selectFrom('jobs')
      .select(['request_id', 'locked_by'])
      .where('id', '=', jobId)
      .executeTakeFirstOrThrow();
    expect(row.request_id).toBe(requestId);
    // The trail: the API's request log, then the worker's job and webhook lines, all with the id.
    await a.waitForLog((l) => l.req_id === requestId && l.msg === 'request completed', 30_000);
    const completed = await worker.waitForLog((l) => l.msg === 'job completed' && l.jobId === jobId, 30_000);
    expect(completed.req_id).toBe(requestId);
    const delivered = await worker.waitForLog((l) => l.msg === 'webhook delivered' && l.jobId === jobId, 30_000);
    expect(delivered.req_id).toBe(requestId);
    expect(b.logs.some((l) => l.req_id === requestId)).toBe(false);
  });

  it('counts rate limits exactly across API processes (Redis)', async () => {
    const { apiKey: limited } = await cluster.createAccount({
      credits: 0,
      plan: 'free',
      rate_limit: { per_minute: 10 },
    });
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) => cluster.apis[i % 2]!.request('GET', '/v1/account', { apiKey: limited })),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200)).toHaveLength(10);
    expect(statuses.filter((s) => s === 429)).toHaveLength(6);
    const remaining = answers
      .filter((r) => r.status === 200)
      .map((r) => Number(r.headers.get('x-ratelimit-remaining')))
      .sort((x, y) => x - y);
    expect(remaining).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    for (const refused of answers.filter((r) => r.status === 429))
      expect(refused.body).toMatchObject({ error: 'RATE_LIMITED' });
  });

  it('answers /readyz and /metrics on every process; the worker serves nothing else', async () => {
    for (const proc of [...cluster.apis, ...cluster.workers]) {
      const ready = await proc.request('GET', '/readyz');
      expect(ready.status, proc.role).toBe(200);
      expect(ready.body).toEqual({
        status: 'ready',
        checks: { database: 'ok', storage: 'ok', renderer: 'ok', redis: 'ok' },
      });
    }
    const worker = cluster.workers[0]!;
    const workerMetrics = (await worker.request('GET', '/metrics')).body as string;
    expect(workerMetrics).toMatch(/^pressroom_job_attempts_total\{outcome="completed"\} [1-9]/m);
    expect(workerMetrics).toMatch(/^pressroom_webhook_deliveries_total\{outcome="delivered"\} [1-9]/m);
    expect(workerMetrics).toMatch(/^pressroom_browser_launches_total 1$/m);
    expect(workerMetrics).toMatch(/^pressroom_jobs_queued\{status="pending"\} 0$/m);
    expect(workerMetrics).toMatch(/^pressroom_redis_up 1$/m);
    const apiMetrics = (await cluster.apis[0]!.request('GET', '/metrics')).body as string;
    expect(apiMetrics).toMatch(
      /^pressroom_http_requests_total\{method="POST",route="\/v1\/pdf\/create-async",status="200"\} 1$/m,
    );
    expect(apiMetrics).toMatch(/^pressroom_credits_consumed_total [1-9]/m);
    expect((await worker.request('GET', '/v1/account', { apiKey })).status).toBe(404);
  });
});
