/**
 * Failure drill (b) (issue 7), on real processes from dist/ with PostgreSQL, Redis and the loopback S3
 * server: PostgreSQL restarted under sync and async load → requests in flight fail as 503
 * SERVICE_UNAVAILABLE (never a 500 or a stack), the same processes recover by themselves, and every
 * accepted job completes, every charge is a delivered document or refunded. The PostgreSQL it restarts
 * is a server of its own (own-postgres.ts), so it runs beside the rest of the suite. Drills (a) and
 * (c): drill-worker-kills.test.ts, drill-redis-down.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCluster, until, type Cluster, type HttpResponse } from '../../support/cluster.js';
import { INVOICE, ledgerOf } from '../../support/drill-kit.js';
import { startOwnPostgres, type OwnPostgres } from '../../support/own-postgres.js';

describe('drill (b): PostgreSQL restarted under load', () => {
  let cluster: Cluster;
  let postgres: OwnPostgres & { dispose(): void };

  beforeAll(async () => {
    postgres = await startOwnPostgres();
    cluster = await startCluster({
      pgUrl: postgres.url,
      apis: 1,
      workers: 1,
      redisUrl: 'redis://127.0.0.1:6379',
      env: { PRESSROOM_LEASE_MS: '5000', PRESSROOM_JOB_POLL_MS: '200', PRESSROOM_RENDER_CONCURRENCY: '2' },
    });
  }, 180_000);
  afterAll(async () => {
    await cluster?.close();
    postgres?.dispose();
  });

  it('fails requests in flight with a coded 503, recovers by itself, and loses nothing', async () => {
    const { accountId, apiKey } = await cluster.createAccount({ credits: 1000, plan: 'enterprise' });
    const api = cluster.apis[0]!;
    const templateId = (
      await api.request('POST', '/v1/templates', { apiKey, body: { name: 'invoice', html: INVOICE } })
    ).body.id;
    const pids = [...cluster.apis, ...cluster.workers].map((p) => p.pid);

    type Outcome = {
      kind: 'sync' | 'async';
      seq: number;
      startedAt: number;
      endedAt: number;
      res?: HttpResponse;
      error?: string;
    };
    const outcomes: Outcome[] = [];
    let running = true;
    let started = 0;
    let recoveredAtRequest = Infinity;
    const loop = async (kind: Outcome['kind']) => {
      let n = 0;
      while (running) {
        const seq = started++;
        const startedAt = Date.now();
        const path = kind === 'sync' ? '/v1/pdf/create' : '/v1/pdf/create-async';
        try {
          const res = await api.request('POST', path, {
            apiKey,
            body: { template_id: templateId, data: { number: `${kind}-${n++}` } },
            signal: AbortSignal.timeout(60_000),
          });
          outcomes.push({ kind, seq, startedAt, endedAt: Date.now(), res });
        } catch (error) {
          outcomes.push({ kind, seq, startedAt, endedAt: Date.now(), error: String(error) });
        }
      }
    };
    const loops = [loop('sync'), loop('sync'), loop('sync'), loop('async')];

    let restartStartedAt = 0;
    let restartEndedAt = 0;
    try {
      await until(
        async () => outcomes.filter((o) => o.res?.status === 200).length >= 8,
        60_000,
        'load before the restart',
      );
      restartStartedAt = Date.now();
      await postgres.restart();
      restartEndedAt = Date.now();
      // Recovery without touching Pressroom: sync and async successes started after the restart.
      await until(
        async () =>
          outcomes.filter((o) => o.startedAt > restartEndedAt && o.res?.status === 200 && o.kind === 'sync').length >=
            5 && outcomes.some((o) => o.startedAt > restartEndedAt && o.res?.status === 200 && o.kind === 'async'),
        90_000,
        'successes after the restart',
      );
      // Recovered means it stays recovered: the requests started from here on are watched too.
      recoveredAtRequest = started;
      await until(
        async () => outcomes.filter((o) => o.seq >= recoveredAtRequest).length >= 8,
        90_000,
        'requests after the recovery',
      );
    } finally {
      running = false;
      await Promise.all(loops);
      if (!postgres.running()) postgres.start();
    }

    // Every answer was a success or a coded, retryable 503: no 500, no stack, no hang.
    expect(outcomes.filter((o) => o.error)).toEqual([]);
    const statuses = new Map<number, number>();
    for (const o of outcomes) statuses.set(o.res!.status, (statuses.get(o.res!.status) ?? 0) + 1);
    expect([...statuses.keys()].sort()).toEqual(statuses.has(503) ? [200, 503] : [200]);
    const unavailable = outcomes.filter((o) => o.res!.status === 503);
    expect(unavailable.length).toBeGreaterThan(0);
    for (const o of unavailable) {
      expect(o.res!.body).toEqual({ error: 'SERVICE_UNAVAILABLE', message: expect.any(String) });
      expect(o.res!.headers.get('retry-after')).toBe('5');
      expect(o.res!.bytes.toString()).not.toMatch(/\bat .+:\d+:\d+|stack/i);
    }
    // Failures are confined to the outage: every request started after the recovery was seen succeeds.
    const afterRecovery = outcomes.filter((o) => o.seq >= recoveredAtRequest);
    expect(afterRecovery.length).toBeGreaterThanOrEqual(8);
    expect(afterRecovery.filter((o) => o.res?.status !== 200).map((o) => o.res?.status ?? o.error)).toEqual([]);
    // The same processes, still running and ready.
    expect([...cluster.apis, ...cluster.workers].map((p) => p.pid)).toEqual(pids);
    for (const p of [...cluster.apis, ...cluster.workers]) expect((await p.request('GET', '/readyz')).status).toBe(200);

    // Nothing lost: every accepted job completes; every charge is a delivered document or refunded.
    const accepted = outcomes
      .filter((o) => o.kind === 'async' && o.res!.status === 200)
      .map((o) => o.res!.body.job_id as string);
    await until(
      async () => {
        const done = await cluster.db
          .selectFrom('jobs')
          .select('id')
          .where('account_id', '=', accountId)
          .where('status', '=', 'completed')
          .execute();
        return done.length >= accepted.length;
      },
      120_000,
      `${accepted.length} accepted jobs to complete`,
    );
    const jobs = await cluster.db
      .selectFrom('jobs')
      .select(['id', 'status', 'transaction_ref'])
      .where('account_id', '=', accountId)
      .execute();
    // A job whose accepting commit reached the database but whose answer was lost still counts; it completes too.
    expect(jobs.filter((j) => j.status !== 'completed')).toEqual([]);
    for (const id of accepted) expect(jobs.some((j) => j.id === id)).toBe(true);
    const syncDelivered = outcomes.filter((o) => o.kind === 'sync' && o.res!.status === 200).length;
    const ledger = await ledgerOf(cluster, accountId);
    expect(ledger.balance + ledger.sum).toBe(0); // balance = −Σ credits
    expect(ledger.pdfgen.length - ledger.refunds.length).toBe(syncDelivered + jobs.length);
    const refundedRefs = new Set(ledger.refunds.map((x) => x.refund_of));
    for (const j of jobs) expect(refundedRefs.has(j.transaction_ref)).toBe(false);

    process.stdout.write(
      `[drill b] restart took ${restartEndedAt - restartStartedAt} ms; ${outcomes.length} requests: ${[...statuses].map(([s, n]) => `${n}×${s}`).join(', ')}; ` +
        `503s answered ${Math.min(...unavailable.map((o) => o.endedAt)) - restartStartedAt}…${Math.max(...unavailable.map((o) => o.endedAt)) - restartStartedAt} ms after the restart began; ` +
        `${accepted.length} accepted jobs (${jobs.length} rows) all completed; ${ledger.refunds.length} refunds\n`,
    );
  }, 300_000);
});
