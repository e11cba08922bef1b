/**
 * Jobs across processes, with real worker processes (`pressroom serve --role worker`) and real Chromium:
 * a worker SIGKILLed mid-render leaves its job to be re-claimed after the lease and completed exactly
 * once, and a worker SIGTERMed mid-render hands its job back and exits cleanly (SQLite and
 * PostgreSQL); jobs through two worker processes on one PostgreSQL schema all complete, each once,
 * with an exact ledger. Waits are on rows and log lines under generous deadlines, never on the clock.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DIALECTS } from '../../support/databases.js';
import { pdfText } from '../../support/documents/pdf-tools.js';
import { startTestApp, until, type TestApp } from '../../support/test-app.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';
import { spawnWorker, type WorkerProcess } from '../../support/worker-process.js';

// ~6 ms of template work per 1000 iterations on the 2-core CI machine: n = 500 renders for ~3 s.
const SLOW = '{% for i in range(0, n) %}{% for j in range(0, 1000) %}{% endfor %}{% endfor %}<h1>Slow {{ label }}</h1>';
const TIMEOUTS = { PRESSROOM_TEMPLATE_TIMEOUT_MS: '30000', PRESSROOM_RENDER_TIMEOUT_MS: '45000' };

/** Each test spawns worker processes and Chromium: deadlines sized for a busy 2-core machine. */
const E2E_TIMEOUT_MS = 240_000;

const spawned: WorkerProcess[] = [];
afterEach(async () => {
  await Promise.all(spawned.splice(0).map((w) => w.stop()));
});

describe.each(DIALECTS)('a worker process killed mid-render on %s', (dialect) => {
  let t: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    // The app is the API only at first: the job must be claimed by the child.
    t = await startTestApp(dialect, { ...TIMEOUTS, PRESSROOM_JOB_POLL_MS: '100' });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  it(
    'leaves the job to be re-claimed after the lease; it completes exactly once',
    async () => {
      const { apiKey } = await t.createAccount({ credits: 5, plan: 'enterprise' });
      const templateId = (await t.request('POST', '/v1/templates', { apiKey, body: { name: 'slow', html: SLOW } })).body
        .id;
      const doomed = spawnWorker(t, {
        ...TIMEOUTS,
        PRESSROOM_LEASE_MS: '1500',
        PRESSROOM_JOB_POLL_MS: '100',
        PRESSROOM_WORKER_CONCURRENCY: '1',
      });
      spawned.push(doomed);
      await doomed.waitForLog((l) => l.msg === 'job worker started');

      const accepted = await t.request('POST', '/v1/pdf/create-async', {
        apiKey,
        body: { template_id: templateId, data: { n: 500, label: 'survivor' }, webhook_url: receiver.url },
      });
      expect(accepted.status).toBe(200);
      const jobId = accepted.body.job_id as string;
      const row = () =>
        t.services.database.db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();

      const claimed = await until(
        async () => {
          const r = await row();
          return r.status === 'processing' && r;
        },
        60_000,
        'the child to claim the job',
      );
      expect(claimed.locked_by).toContain(`:${doomed.pid}:`);
      // Killed while it holds the job: the template loop alone takes seconds, so the job is unfinished.
      doomed.crash();
      expect(await doomed.exited).toBe('SIGKILL');
      const orphaned = await row();
      expect(orphaned).toMatchObject({ status: 'processing', attempts: 1, completed_at: null });
      expect(doomed.logs.some((l) => l.msg === 'job completed')).toBe(false);

      // Another worker (here: the app's own) takes it over once the dead worker's lease has run out.
      t.services.startWorkers();
      const done = await until(
        async () => {
          const r = await row();
          return r.status === 'completed' && r;
        },
        60_000,
        'the job to complete',
      );
      expect(done.attempts).toBe(2);
      expect(done.started_at).toBe(claimed.started_at);
      expect(done.completed_at!).toBeGreaterThanOrEqual(orphaned.locked_until!);

      const job = (await t.request('GET', `/v1/pdf/jobs/${jobId}`, { apiKey })).body;
      const link = new URL(job.result_url);
      const pdf = await t.request('GET', `${link.pathname}${link.search}`);
      expect(pdfText(pdf.bytes)).toContain('Slow survivor');

      await receiver.waitFor(1);
      // A second delivery would come right behind the first: a short wait for what must not happen.
      await new Promise((r) => setTimeout(r, 500));
      expect(receiver.received.filter((h) => h.json?.job_id === jobId).map((h) => h.json.event)).toEqual([
        'pdf.completed',
      ]);
      const txs = await t.services.database.db
        .selectFrom('credit_transactions')
        .selectAll()
        .where('account_id', '=', claimed.account_id)
        .execute();
      expect(txs.filter((x) => x.transaction_type === 'PDFGEN')).toHaveLength(1);
      expect(txs.filter((x) => x.transaction_type === 'REFUND')).toHaveLength(0);
    },
    E2E_TIMEOUT_MS,
  );

  it(
    'on SIGTERM stops claiming, hands a job it cannot finish within the grace period back at once, and exits 0',
    async () => {
      const { apiKey } = await t.createAccount({ credits: 5, plan: 'enterprise' });
      const templateId = (await t.request('POST', '/v1/templates', { apiKey, body: { name: 'slow', html: SLOW } })).body
        .id;
      await t.services.stopWorkers(); // from the previous test: only the child may claim
      const child = spawnWorker(t, {
        ...TIMEOUTS,
        PRESSROOM_SHUTDOWN_GRACE_MS: '300',
        PRESSROOM_JOB_POLL_MS: '100',
        PRESSROOM_WORKER_CONCURRENCY: '1',
      });
      spawned.push(child);
      await child.waitForLog((l) => l.msg === 'job worker started');
      const { job_id: jobId } = (
        await t.request('POST', '/v1/pdf/create-async', {
          apiKey,
          body: { template_id: templateId, data: { n: 2000, label: 'x' } },
        })
      ).body;
      const row = () =>
        t.services.database.db.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
      await until(async () => (await row()).status === 'processing', 60_000, 'the child to claim the job');
      process.kill(child.pid, 'SIGTERM');
      expect(await child.exited).toBe(0);
      // Back in the queue, released rather than left to its lease (no lock left), the interrupted
      // attempt not counted, and not finished first: the job needs far longer than the grace period.
      expect(await row()).toMatchObject({
        status: 'pending',
        attempts: 0,
        locked_by: null,
        locked_until: null,
        completed_at: null,
      });
      expect(child.logs.some((l) => l.msg === 'released unfinished jobs to the queue' && l.released === 1)).toBe(true);
      expect(child.logs.some((l) => l.msg === 'job completed')).toBe(false);
      expect(child.logs.some((l) => l.msg === 'shutdown deadline passed; exiting')).toBe(false);
      await t.services.database.db.updateTable('jobs').set({ status: 'failed' }).where('id', '=', jobId).execute();
    },
    E2E_TIMEOUT_MS,
  );
});

describe('two worker processes on one PostgreSQL schema', () => {
  let t: TestApp;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    t = await startTestApp('postgres', { PRESSROOM_JOB_POLL_MS: '200' });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
  });

  // 24 jobs for 2 processes × 2 concurrent claims: every claim contends with three others, many
  // times over; more jobs only repeat that (100 took minutes on a busy machine).
  const JOBS = 24;

  it(
    `complete ${JOBS} jobs, each exactly once, with an exact ledger`,
    async () => {
      const CREDITS = JOBS + 30;
      const { accountId, apiKey } = await t.createAccount({ credits: CREDITS, plan: 'enterprise' });
      const templateId = (
        await t.request('POST', '/v1/templates', { apiKey, body: { name: 'n', html: '<h1>Job {{ n }}</h1>' } })
      ).body.id;
      const env = {
        PRESSROOM_WORKER_CONCURRENCY: '2',
        PRESSROOM_RENDER_CONCURRENCY: '2',
        PRESSROOM_JOB_POLL_MS: '200',
      };
      const workers = [spawnWorker(t, env), spawnWorker(t, env)];
      spawned.push(...workers);
      await Promise.all(workers.map((w) => w.waitForLog((l) => l.msg === 'job worker started')));

      const ids: string[] = [];
      for (let n = 0; n < JOBS; n += 8) {
        const batch = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            t.request('POST', '/v1/pdf/create-async', {
              apiKey,
              body: { template_id: templateId, data: { n: n + i }, webhook_url: receiver.url },
            }),
          ),
        );
        for (const res of batch) {
          expect(res.status).toBe(200);
          ids.push(res.body.job_id);
        }
      }
      await until(
        async () => (await t.request('GET', '/v1/pdf/jobs?status=completed&limit=1', { apiKey })).body.total === JOBS,
        180_000,
        `${JOBS} completed jobs`,
      );
      const hooks = await receiver.waitFor(JOBS, (h) => h.json?.event === 'pdf.completed', 30_000);
      // A duplicate delivery would come right behind: a short wait for what must not happen.
      await new Promise((r) => setTimeout(r, 500));

      // Each job: completed, claimed once, one pdf.completed webhook, one "job completed" across both workers.
      const rows = await t.services.database.db
        .selectFrom('jobs')
        .selectAll()
        .where('account_id', '=', accountId)
        .execute();
      expect(rows).toHaveLength(JOBS);
      // Every claim is accounted for: the first, plus one per attempt a worker logged as failed and
      // retrying (a busy machine can fail an attempt with a transient RENDER_FAILED or RENDER_TIMEOUT);
      // no claim was ever made while another worker held the job.
      const logs = workers.flatMap((w) => w.logs);
      const retries = logs.filter((l) => l.msg === 'job attempt failed; will retry');
      const retriesOf = (jobId: string) => retries.filter((l) => l.jobId === jobId).length;
      for (const r of rows)
        expect(r, JSON.stringify(retries)).toMatchObject({
          status: 'completed',
          attempts: 1 + retriesOf(r.id),
          error_code: null,
        });
      expect(logs.filter((l) => /lease lost/.test(String(l.msg)))).toEqual([]);
      expect(receiver.received).toHaveLength(JOBS);
      expect(new Set(hooks.map((h) => h.json.job_id))).toEqual(new Set(ids));
      const completedBy = workers.map((w) =>
        w.logs.filter((l) => l.msg === 'job completed').map((l) => l.jobId as string),
      );
      expect(completedBy[0]!.length + completedBy[1]!.length).toBe(JOBS);
      expect(new Set([...completedBy[0]!, ...completedBy[1]!])).toEqual(new Set(ids));
      expect(completedBy[0]!.length).toBeGreaterThan(0);
      expect(completedBy[1]!.length).toBeGreaterThan(0);

      // The ledger: balance = −Σ credits; exactly one PDFGEN per job and no REFUND.
      const txs = await t.services.database.db
        .selectFrom('credit_transactions')
        .selectAll()
        .where('account_id', '=', accountId)
        .execute();
      expect(txs.filter((x) => x.transaction_type === 'PDFGEN')).toHaveLength(JOBS);
      expect(txs.filter((x) => x.transaction_type === 'REFUND')).toHaveLength(0);
      const balance = (await t.request('GET', '/v1/account', { apiKey })).body.credits as number;
      expect(balance).toBe(CREDITS - JOBS);
      expect(balance).toBe(-txs.reduce((sum, x) => sum + x.credits, 0));
    },
    E2E_TIMEOUT_MS,
  );
});
