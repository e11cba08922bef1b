/**
 * Failure drill (c) (issue 7): Redis down → rate limits fall back to per-process memory limits
 * (docs/rate-limits.md), /readyz stays ready (Redis "degraded"), generation, jobs and webhooks keep
 * working. It stops only a Redis of its own (port 6390), so it runs beside the other test files.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfText } from '../../support/documents/pdf-tools.js';
import { httpRequest, startCluster, until, type Cluster, type PressroomProcess } from '../../support/cluster.js';
import { INVOICE } from '../../support/drill-kit.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

const REDIS_PORT = 6390;

function redisCli(...args: string[]): void {
  try {
    execFileSync('redis-cli', ['-p', String(REDIS_PORT), ...args], { stdio: 'ignore' });
  } catch {
    // not running
  }
}

describe('drill (c): Redis down', () => {
  let cluster: Cluster;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    redisCli('shutdown', 'nosave');
    execFileSync('redis-server', [
      '--port',
      String(REDIS_PORT),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'yes',
    ]);
    await until(
      async () => {
        try {
          execFileSync('redis-cli', ['-p', String(REDIS_PORT), 'ping'], { stdio: 'ignore' });
          return true;
        } catch {
          return false;
        }
      },
      10_000,
      'redis on 6390',
    );
    receiver = await startWebhookReceiver();
    cluster = await startCluster({
      apis: 2,
      workers: 1,
      redisUrl: `redis://127.0.0.1:${REDIS_PORT}`,
      env: { PRESSROOM_JOB_POLL_MS: '200', PRESSROOM_RENDER_CONCURRENCY: '1' },
    });
  }, 180_000);
  afterAll(async () => {
    await cluster?.close();
    await receiver?.close();
    redisCli('shutdown', 'nosave');
  });

  it('falls back to per-process rate limits, stays ready, and keeps generating', async () => {
    const [a, b] = cluster.apis as [PressroomProcess, PressroomProcess];
    const statusesOf = async (proc: PressroomProcess, apiKey: string, n: number) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) out.push((await proc.request('GET', '/v1/account', { apiKey })).status);
      return out;
    };

    // Redis up: one count across both processes.
    const shared = await cluster.createAccount({ credits: 0, plan: 'free', rate_limit: { per_minute: 6 } });
    expect([...(await statusesOf(a, shared.apiKey, 4)), ...(await statusesOf(b, shared.apiKey, 4))]).toEqual([
      200, 200, 200, 200, 200, 200, 429, 429,
    ]);

    redisCli('shutdown', 'nosave');
    for (const p of cluster.apis) {
      await until(
        async () => {
          const ready = await p.request('GET', '/readyz');
          return ready.status === 200 && /^degraded: /.test(ready.body.checks.redis);
        },
        20_000,
        'readyz to report Redis degraded',
      );
    }
    const metrics = (await a.request('GET', '/metrics')).body as string;
    expect(metrics).toMatch(/^pressroom_redis_up 0$/m);

    // Redis down: each process limits on its own (up to N× the limit with N processes), never blocks all, never lets all through.
    const { apiKey: limitedKey } = await cluster.createAccount({
      credits: 0,
      plan: 'free',
      rate_limit: { per_minute: 4 },
    });
    expect(await statusesOf(a, limitedKey, 6)).toEqual([200, 200, 200, 200, 429, 429]);
    expect(await statusesOf(b, limitedKey, 6)).toEqual([200, 200, 200, 200, 429, 429]);

    // Everything else works: sync generation with a presigned link, a job and its webhook.
    const { apiKey } = await cluster.createAccount({ credits: 5, plan: 'pro' });
    const templateId = (await a.request('POST', '/v1/templates', { apiKey, body: { name: 'invoice', html: INVOICE } }))
      .body.id;
    const made = await b.request('POST', '/v1/pdf/create', {
      apiKey,
      body: { template_id: templateId, data: { number: 'NO-REDIS-1' } },
    });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(pdfText((await httpRequest('', 'GET', made.body.url)).bytes)).toContain('Invoice NO-REDIS-1');
    const accepted = await a.request('POST', '/v1/pdf/create-async', {
      apiKey,
      body: { template_id: templateId, data: { number: 'NO-REDIS-2' }, webhook_url: receiver.url },
    });
    expect(accepted.status).toBe(200);
    const [hook] = await receiver.waitFor(1, (h) => h.json?.job_id === accepted.body.job_id, 60_000);
    expect(hook!.json.event).toBe('pdf.completed');

    // Redis back: the processes reconnect by themselves and count together again.
    execFileSync('redis-server', [
      '--port',
      String(REDIS_PORT),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--daemonize',
      'yes',
    ]);
    for (const p of cluster.apis) {
      await until(
        async () => (await p.request('GET', '/readyz')).body.checks.redis === 'ok',
        30_000,
        'Redis to be back',
      );
    }
    const again = await cluster.createAccount({ credits: 0, plan: 'free', rate_limit: { per_minute: 6 } });
    expect([...(await statusesOf(a, again.apiKey, 4)), ...(await statusesOf(b, again.apiKey, 4))]).toEqual([
      200, 200, 200, 200, 200, 200, 429, 429,
    ]);
  }, 240_000);
});
