/**
 * Failure drill (a) (issue 7), on real processes from dist/ with PostgreSQL, Redis and the loopback S3
 * server: a worker SIGKILLed ten times during a 200-job run → every job completed once, one PDFGEN
 * each, a REFUND only for a job that failed, one webhook (one webhook-id) per job, a balanced ledger.
 * Then a 24-item zip batch on the same cluster (issue 40): workers holding its items SIGKILLed twice
 * → every item ends once, the counts, the zip, the ledger and the one batch webhook agree, and
 * the items were completed by more than one worker process.
 * It kills only its own processes, so it runs beside the other test files (as do drill (b),
 * drill-postgres-restart.test.ts, on a PostgreSQL of its own, and drill (c), drill-redis-down.test.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfText } from '../../support/documents/pdf-tools.js';
import { httpRequest, startCluster, until, type Cluster, type PressroomProcess } from '../../support/cluster.js';
import { ledgerOf, sleep } from '../../support/drill-kit.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';
import { unzip } from '../../support/documents/zip-entries.js';

// ~6 ms of template work per 1000 iterations on the 2-core machine: n = 60 keeps a job ~0.5 s busy.
const BUSY = '{% for i in range(0, n) %}{% for j in range(0, 1000) %}{% endfor %}{% endfor %}<h1>Job {{ label }}</h1>';
// ~0.1 s of evaluation per job here (warm): a kill finds its victim mid-job. The jobs are fed as the
// kills need them (TOP_UP unfinished before each), so a fast machine cannot run out of work before the
// tenth kill and a slow one does not wait on work the drill does not need.
const BUSY_LOOPS = 120;
const TOP_UP = 16;

// Batch items: keeps one busy for a moment of template work, so a kill finds its victim mid-item.
const BATCH_BUSY =
  '{% for i in range(0, n) %}{% for j in range(0, 1000) %}{% endfor %}{% endfor %}<h1>Item {{ label }}</h1>';
const BATCH_ITEMS = 24;
const BATCH_KILLS = 2;

describe('drill (a): a worker SIGKILLed ten times during a 200-job run', () => {
  let cluster: Cluster;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    cluster = await startCluster({
      apis: 1,
      workers: 2,
      redisUrl: 'redis://127.0.0.1:6379',
      env: {
        PRESSROOM_LEASE_MS: '2000',
        PRESSROOM_JOB_POLL_MS: '200',
        PRESSROOM_WORKER_CONCURRENCY: '2',
        PRESSROOM_RENDER_CONCURRENCY: '2',
        PRESSROOM_TEMPLATE_TIMEOUT_MS: '20000',
        PRESSROOM_RENDER_TIMEOUT_MS: '30000',
        PRESSROOM_SHUTDOWN_GRACE_MS: '1000',
      },
    });
  }, 180_000);
  afterAll(async () => {
    await cluster?.close();
    await receiver?.close();
  });

  it('completes every job exactly once, with one PDFGEN and one webhook each, and a balanced ledger', async () => {
    const JOBS = 200;
    const KILLS = 10;
    const { accountId, apiKey } = await cluster.createAccount({ credits: JOBS, plan: 'enterprise' });
    const api = cluster.apis[0]!;
    const templateId = (await api.request('POST', '/v1/templates', { apiKey, body: { name: 'busy', html: BUSY } })).body
      .id;

    // The 200 jobs are submitted as the run needs them: enough unfinished work before every kill that
    // the victim is mid-job, whatever this machine's speed, and the rest once the kills are over.
    const ids: string[] = [];
    const submit = async (count: number) => {
      const n = Math.min(count, JOBS - ids.length);
      const batch = await Promise.all(
        Array.from({ length: n }, (_, i) =>
          api.request('POST', '/v1/pdf/create-async', {
            apiKey,
            body: {
              template_id: templateId,
              data: { n: BUSY_LOOPS, label: `#${ids.length + i}` },
              webhook_url: receiver.url,
            },
          }),
        ),
      );
      for (const res of batch) {
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        ids.push(res.body.job_id);
      }
    };
    const unfinished = async () =>
      Number(
        (
          await cluster.db
            .selectFrom('jobs')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('account_id', '=', accountId)
            .where('status', 'in', ['pending', 'processing'])
            .executeTakeFirstOrThrow()
        ).n,
      );
    const topUp = async () => {
      const missing = TOP_UP - (await unfinished());
      if (missing > 0) await submit(missing); // at most TOP_UP per kill: 16 + 10 × 16 < 200
    };
    await submit(TOP_UP);

    // Ten incidents: kill the longest-running worker once it holds jobs (mid-render), start a
    // replacement, and wait until the jobs it held are completed by another worker (after their lease)
    // before the next kill. Without that wait the next kill mostly hits whoever re-claimed the orphans
    // (they come first in the queue) and kills the same few jobs until they give up (JOB_INTERRUPTED).
    const alive = new Set<PressroomProcess>(cluster.workers);
    const everyWorker: PressroomProcess[] = [...cluster.workers];
    const replacements: Promise<void>[] = [];
    const kills: { pid: number; held: string[]; recoveredMs: number }[] = [];
    for (let k = 0; k < KILLS; k++) {
      await topUp();
      const victim = await until(
        async () => {
          const w = [...alive][0];
          if (!w) return undefined;
          const held = await cluster.db
            .selectFrom('jobs')
            .select('id')
            .where('status', '=', 'processing')
            .where('locked_by', 'like', `%:${w.pid}:%`)
            .execute();
          return held.length > 0 && { w, held: held.map((h) => h.id) };
        },
        60_000,
        `a worker holding jobs (kill ${k + 1})`,
      );
      victim.w.crash();
      const killedAt = Date.now();
      expect(await victim.w.exited).toBe('SIGKILL');
      alive.delete(victim.w);
      // What it held when it died (it may have finished one between the look and the kill).
      const orphans = (
        await cluster.db
          .selectFrom('jobs')
          .select('id')
          .where('status', '=', 'processing')
          .where('locked_by', 'like', `%:${victim.w.pid}:%`)
          .execute()
      ).map((r) => r.id);
      replacements.push(
        cluster.spawn('worker').then((w) => {
          alive.add(w);
          everyWorker.push(w);
        }),
      );
      await until(
        async () => {
          if (orphans.length === 0) return true;
          const rows = await cluster.db.selectFrom('jobs').select('status').where('id', 'in', orphans).execute();
          return rows.every((r) => r.status === 'completed' || r.status === 'failed');
        },
        60_000,
        `the jobs of kill ${k + 1} to be finished by another worker`,
      );
      kills.push({ pid: victim.w.pid, held: orphans, recoveredMs: Date.now() - killedAt });
      await sleep(500);
    }
    await Promise.all(replacements);
    expect(kills).toHaveLength(KILLS);
    while (ids.length < JOBS) await submit(20);

    const finished = async () =>
      Number(
        (
          await cluster.db
            .selectFrom('jobs')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .where('account_id', '=', accountId)
            .where('status', 'in', ['completed', 'failed'])
            .executeTakeFirstOrThrow()
        ).n,
      );
    await until(async () => (await finished()) === JOBS, 180_000, `${JOBS} finished jobs`);
    await until(
      async () =>
        Number(
          (
            await cluster.db
              .selectFrom('webhook_deliveries')
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .where('state', '=', 'delivered')
              .executeTakeFirstOrThrow()
          ).n,
        ) === JOBS,
      60_000,
      `${JOBS} delivered webhooks`,
    );

    const rows = await cluster.db.selectFrom('jobs').selectAll().where('account_id', '=', accountId).execute();
    expect(rows).toHaveLength(JOBS);
    const failed = rows.filter((r) => r.status === 'failed');
    for (const r of failed) expect(r.error_code, `job ${r.id}: ${r.last_error}`).toBe('JOB_INTERRUPTED');
    for (const r of rows.filter((r) => r.status === 'completed'))
      expect(r.result_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/pressroom-files\//);
    // Every job a killed worker held was claimed again.
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const kill of kills) for (const id of kill.held) expect(byId.get(id)!.attempts).toBeGreaterThanOrEqual(2);

    // The ledger: one PDFGEN per job, a REFUND exactly for each failed job, balance = −Σ credits.
    const ledger = await ledgerOf(cluster, accountId);
    expect(ledger.pdfgen).toHaveLength(JOBS);
    expect(new Set(ledger.pdfgen.map((x) => x.transaction_ref))).toEqual(new Set(rows.map((r) => r.transaction_ref)));
    expect(ledger.refunds.map((x) => x.refund_of).sort()).toEqual(failed.map((r) => r.transaction_ref).sort());
    expect(ledger.balance).toBe(failed.length);
    expect(ledger.balance + ledger.sum).toBe(0); // balance = −Σ credits

    // One notification per job (one webhook-id); a kill between send and record may re-send it, with the same id.
    const deliveries = await cluster.db.selectFrom('webhook_deliveries').select(['id', 'job_id', 'event']).execute();
    expect(deliveries).toHaveLength(JOBS);
    expect(new Set(deliveries.map((d) => d.job_id))).toEqual(new Set(ids));
    const webhookIdOf = new Map(deliveries.map((d) => [d.job_id, d.id]));
    for (const hook of receiver.received) expect(hook.headers['webhook-id']).toBe(webhookIdOf.get(hook.json.job_id));
    expect(new Set(receiver.received.map((h) => h.json.job_id))).toEqual(new Set(ids));

    // Completion logged at most once per job across every worker, the killed ones included.
    const completedLogs = new Map<string, number>();
    for (const w of everyWorker)
      for (const l of w.logs)
        if (l.msg === 'job completed') completedLogs.set(l.jobId, (completedLogs.get(l.jobId) ?? 0) + 1);
    expect([...completedLogs.values()].every((n) => n === 1)).toBe(true);
    // A kill right after a commit can swallow the log line, never the completion.
    expect(JOBS - failed.length - completedLogs.size).toBeLessThanOrEqual(KILLS);

    const sample = rows.find((r) => r.status === 'completed')!;
    expect(pdfText((await httpRequest('', 'GET', sample.result_url!)).bytes)).toContain('Job #');
    const reclaimed = rows.filter((r) => r.attempts > 1).length;
    const held = new Set(kills.flatMap((k) => k.held));
    process.stdout.write(
      `[drill a] ${JOBS} jobs, ${KILLS} SIGKILLs of workers holding ${held.size} distinct jobs mid-render; ${reclaimed} jobs claimed more than once; ` +
        `${JOBS - failed.length} completed, ${failed.length} failed; ${ledger.pdfgen.length} PDFGEN, ${ledger.refunds.length} REFUND, balance ${ledger.balance}; ` +
        `${receiver.received.length} webhook requests for ${JOBS} webhook-ids; orphaned jobs finished ${Math.min(...kills.map((k) => k.recoveredMs))}…${Math.max(...kills.map((k) => k.recoveredMs))} ms after each kill (lease 2000 ms)\n`,
    );
  }, 420_000);

  it('batch (issue 40): workers SIGKILLed during a 24-item zip batch; every item ends once; counts, zip, ledger and one webhook agree; items spread over the workers', async () => {
    const { accountId, apiKey } = await cluster.createAccount({ credits: BATCH_ITEMS, plan: 'enterprise' });
    const api = cluster.apis[0]!;
    const templateId = (
      await api.request('POST', '/v1/templates', { apiKey, body: { name: 'busy batch', html: BATCH_BUSY } })
    ).body.id;
    const items = Array.from({ length: BATCH_ITEMS }, (_, i) => ({
      data: { n: 40, label: `#${i}` },
      filename: `item-${i}`,
    }));
    const accepted = await api.request('POST', '/v1/pdf/batches', {
      apiKey,
      body: { template_id: templateId, items, output: 'zip', webhook_url: receiver.url },
    });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
    const batchId = accepted.body.batch_id as string;

    const alive = new Set<PressroomProcess>(cluster.workers);
    const everyWorker: PressroomProcess[] = [...cluster.workers];
    const replacements: Promise<void>[] = [];
    let kills = 0;
    for (; kills < BATCH_KILLS; kills++) {
      const victim = await until(
        async () => {
          const left = await cluster.db
            .selectFrom('jobs')
            .select('id')
            .where('batch_id', '=', batchId)
            .where('status', '=', 'pending')
            .execute();
          if (left.length === 0) return { w: undefined };
          for (const w of alive) {
            const held = await cluster.db
              .selectFrom('jobs')
              .select('id')
              .where('batch_id', '=', batchId)
              .where('status', '=', 'processing')
              .where('locked_by', 'like', `%:${w.pid}:%`)
              .execute();
            if (held.length > 0) return { w };
          }
          return undefined;
        },
        60_000,
        `a worker holding items (kill ${kills + 1})`,
      );
      if (!victim.w) break; // a very fast machine ran out of items before the kills
      victim.w.crash();
      expect(await victim.w.exited).toBe('SIGKILL');
      alive.delete(victim.w);
      replacements.push(
        cluster.spawn('worker').then((w) => {
          alive.add(w);
          everyWorker.push(w);
        }),
      );
      await sleep(300);
    }
    await Promise.all(replacements);
    expect(kills).toBeGreaterThan(0);

    let batch: Record<string, any> = {};
    await until(
      async () => {
        batch = (await api.request('GET', `/v1/pdf/batches/${batchId}`, { apiKey })).body;
        return ['completed', 'completed_with_errors', 'failed'].includes(batch.status);
      },
      240_000,
      'the batch to end',
    );

    const rows = await cluster.db.selectFrom('jobs').selectAll().where('batch_id', '=', batchId).execute();
    const completed = rows.filter((r) => r.status === 'completed');
    const failed = rows.filter((r) => r.status === 'failed');
    expect(rows).toHaveLength(BATCH_ITEMS);
    expect(completed.length + failed.length).toBe(BATCH_ITEMS);
    for (const r of failed) expect(r.error_code, r.last_error ?? '').toBe('JOB_INTERRUPTED');
    expect(batch).toMatchObject({
      total: BATCH_ITEMS,
      completed: completed.length,
      failed: failed.length,
      cancelled: 0,
      pending: 0,
      processing: 0,
    });
    expect(batch.status).toBe(failed.length > 0 ? 'completed_with_errors' : 'completed');

    // The zip holds exactly the delivered items.
    const zip = await httpRequest('', 'GET', batch.result.url);
    expect(zip.status).toBe(200);
    expect([...unzip(zip.bytes).keys()].sort()).toEqual(completed.map((r) => `${r.filename}.pdf`).sort());

    const ledger = await ledgerOf(cluster, accountId);
    expect(ledger.pdfgen).toHaveLength(BATCH_ITEMS);
    expect(ledger.refunds.map((x) => x.refund_of).sort()).toEqual(failed.map((r) => r.transaction_ref).sort());
    expect(ledger.balance).toBe(failed.length);

    await until(() => receiver.received.some((h) => h.json.batch_id === batchId), 60_000, 'the batch webhook');
    const hooks = await cluster.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'event'])
      .where('event', 'in', ['pdf.batch.completed', 'pdf.batch.failed', 'pdf.batch.cancelled'])
      .execute();
    expect(hooks).toHaveLength(1);
    expect(
      new Set(receiver.received.filter((h) => h.json.batch_id === batchId).map((h) => h.headers['webhook-id'])),
    ).toEqual(new Set([hooks[0]!.id]));

    // Items completed in more than one worker process (each completion is logged by its worker).
    const byWorker = everyWorker
      .map((w) => w.logs.filter((l) => l.msg === 'job completed' && rows.some((r) => r.id === l.jobId)).length)
      .filter((n) => n > 0);
    expect(byWorker.length).toBeGreaterThan(1);
    process.stdout.write(
      `[batch drill] ${BATCH_ITEMS} items, ${kills} SIGKILLs; ${completed.length} completed, ${failed.length} failed; items completed by ${byWorker.length} worker processes (${byWorker.join(', ')})\n`,
    );
  }, 420_000);
});
