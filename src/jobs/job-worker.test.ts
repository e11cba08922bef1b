/**
 * The queue itself, on real SQLite and PostgreSQL, with a scripted document service in place of
 * Chromium: claims are exclusive, retries back off, permanent failures refund once, dead workers'
 * leases run out, shutdown hands work back. (test/e2e/jobs*.test.ts run the same with real rendering.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../db/database.js';
import { createCreditLedger } from '../credits/ledger.js';
import { createCharges } from '../credits/charges.js';
import { createTemplateService, type TemplateService } from '../templates/templates.js';
import type { DocumentService } from '../documents/documents.js';
import { AppError } from '../shared/errors.js';
import { createLogger } from '../shared/log.js';
import { createWebhookQueue } from '../webhooks/webhook-queue.js';
import { createIdempotencyService } from '../idempotency/idempotency.js';
import { DIALECTS } from '../../test/support/databases.js';
import { createTestDatabase, type TestDatabase } from '../../test/support/databases.js';
import { TEST_PG_URL } from '../../test/support/global-setup.js';
import { createJobWakeups, type JobWakeups } from './job-wakeups.js';
import { createJobService, type JobService } from './jobs.js';
import { createJobWorker, type JobWorker } from './job-worker.js';
import * as store from './jobs-store.js';

const logger = createLogger('silent');
const OPTIONS = { exportType: 'url' as const, expirationSeconds: 3600, filename: 'doc', storeS3: false };

/** Scripted by `data.behavior`: ok, busy-once, always-busy, always-timeout, template-error, hang (until aborted). */
function scriptedDocuments(templates: TemplateService): DocumentService & { calls: Map<string, number> } {
  const calls = new Map<string, number>();
  return {
    calls,
    prepare: async (accountId, templateId) => ({
      template: await templates.get(accountId, templateId),
      einvoice: null,
    }),
    generate: () => Promise.reject(new Error('not used')),
    preview: () => Promise.reject(new Error('not used')),
    async produce({ data, options, signal }) {
      const key = String(data.key);
      const n = (calls.get(key) ?? 0) + 1;
      calls.set(key, n);
      const behavior = data.behavior;
      if (behavior === 'busy-once' && n === 1) throw new AppError('RENDERER_BUSY', 'busy');
      if (behavior === 'always-busy') throw new AppError('RENDERER_BUSY', 'busy');
      if (behavior === 'always-timeout')
        throw new AppError('RENDER_TIMEOUT', 'The document did not finish rendering within 30 s');
      if (behavior === 'template-error') throw new AppError('TEMPLATE_RENDER_ERROR', 'items is undefined (line 3)');
      if (behavior === 'hang') {
        await new Promise((_, reject) =>
          signal?.addEventListener('abort', () => reject(new AppError('RENDER_FAILED', 'aborted'))),
        );
      }
      await new Promise((r) => setTimeout(r, 5));
      return {
        delivery: {
          kind: 'url',
          url: `https://files.example/${key}.pdf`,
          filename: `${options.filename}.pdf`,
          expiresAt: Date.now() + 3600_000,
          fileId: key,
        },
        renderMs: 5,
      };
    },
  };
}

describe.each(DIALECTS)('job queue on %s', (dialect) => {
  let testDb: TestDatabase;
  let database: DatabaseHandle;
  let wakeups: JobWakeups;
  let jobs: JobService;
  let documents: ReturnType<typeof scriptedDocuments>;
  let accountId: string;
  let templateId: string;
  const ledger = () => createCreditLedger(database.db);
  const charges = () =>
    createCharges({ db: database.db, ledger: ledger(), instanceId: 'test', leaseMs: 30_000, logger });
  const webhooks = createWebhookQueue('k'.repeat(40));
  const workers: JobWorker[] = [];

  const worker = (overrides: Partial<{ workerConcurrency: number; leaseMs: number; maxAttempts: number }> = {}) => {
    const w = createJobWorker({
      database,
      documents,
      templates: createTemplateService(database.db, { dialect: database.dialect }),
      charges: charges(),
      webhooks,
      wakeups,
      jobs: {
        workerConcurrency: 2,
        leaseMs: 2000,
        maxAttempts: 3,
        pollIntervalMs: 50,
        retryBaseDelayMs: 20,
        ...overrides,
      },
      logger,
    });
    workers.push(w);
    return w;
  };
  const submit = (data: Record<string, unknown>, webhookUrl: string | null = null) =>
    jobs.accept(accountId, {
      templateId,
      data,
      options: OPTIONS,
      filename: null,
      webhookUrl,
      webhookSecret: webhookUrl ? 's'.repeat(16) : null,
    });
  const row = (id: string) => database.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const until = async (what: () => Promise<boolean>, timeoutMs = 15_000) => {
    const end = Date.now() + timeoutMs;
    while (!(await what())) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  const transactions = async () =>
    database.db.selectFrom('credit_transactions').selectAll().where('account_id', '=', accountId).execute();

  beforeAll(async () => {
    testDb = await createTestDatabase(dialect);
    database = await openDatabase({
      dialect,
      url: dialect === 'postgres' ? TEST_PG_URL : undefined,
      sqlitePath: `${testDb.dataDir}/p.db`,
      pgSchema: testDb.pgSchema,
    });
    wakeups = await createJobWakeups(database, logger);
    const templates = createTemplateService(database.db, { dialect: database.dialect });
    documents = scriptedDocuments(templates);
    jobs = createJobService({
      database,
      documents,
      charges: charges(),
      idempotency: createIdempotencyService(database.db, { instanceId: 'test', leaseMs: 30_000 }),
      webhooks,
      wakeups,
      allowPrivateNetworks: true,
      retentionDays: 30,
    });
    accountId = 'acc_test';
    await database.db
      .insertInto('accounts')
      .values({
        id: accountId,
        email: null,
        plan: 'pro',
        credits: 0,
        rate_limit_per_minute: null,
        rate_limit_per_day: null,
        created_at: Date.now(),
      })
      .execute();
    await ledger().grant(accountId, 1000, 'BONUS');
    templateId = (await templates.create(accountId, { name: 't', html: '{{ key }}' })).id;
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.stop(0)));
    await wakeups?.close();
    await database?.close();
    await testDb?.dispose();
  });

  it('debits and queues in one transaction; a 402 writes no job', async () => {
    const before = await ledger().balance(accountId);
    const accepted = await submit({ key: 'queued' });
    expect(accepted.creditsRemaining).toBe(before - 1);
    const job = await row(accepted.jobId);
    expect(job).toMatchObject({ status: 'pending', attempts: 0 });
    const pdfgen = (await transactions()).find((t) => t.transaction_ref === job.transaction_ref);
    expect(pdfgen).toMatchObject({ transaction_type: 'PDFGEN', credits: 1 });
    await database.db.updateTable('jobs').set({ status: 'failed' }).where('id', '=', accepted.jobId).execute(); // keep it out of later tests

    await database.db
      .insertInto('accounts')
      .values({
        id: 'acc_broke',
        email: null,
        plan: 'free',
        credits: 0,
        rate_limit_per_minute: null,
        rate_limit_per_day: null,
        created_at: Date.now(),
      })
      .execute();
    const broke = await createTemplateService(database.db, { dialect: database.dialect }).create('acc_broke', {
      name: 'b',
      html: 'x',
    });
    await expect(
      jobs.accept('acc_broke', {
        templateId: broke.id,
        data: {},
        options: OPTIONS,
        filename: null,
        webhookUrl: null,
        webhookSecret: null,
      }),
    ).rejects.toMatchObject({ code: 'INSUFFICIENT_CREDITS' });
    expect(await database.db.selectFrom('jobs').selectAll().where('account_id', '=', 'acc_broke').execute()).toEqual(
      [],
    );
  });

  it('runs 60 jobs through two workers, each claimed and completed exactly once', async () => {
    const a = worker({ workerConcurrency: 3 });
    const b = worker({ workerConcurrency: 3 });
    a.start();
    b.start();
    const ids = await Promise.all(
      Array.from({ length: 60 }, (_, i) => submit({ key: `bulk-${i}` }).then((x) => x.jobId)),
    );
    await until(async () => (await store.countJobs(database.db, accountId, 'completed')) >= 60);
    await Promise.all([a.stop(1000), b.stop(1000)]);
    for (const id of ids) {
      const job = await row(id);
      expect(job).toMatchObject({
        status: 'completed',
        attempts: 1,
        locked_by: null,
        result_url: expect.stringContaining('bulk-'),
      });
      expect(job.completed_at).toBeGreaterThanOrEqual(job.started_at!);
    }
    for (let i = 0; i < 60; i++) expect(documents.calls.get(`bulk-${i}`)).toBe(1);
  });

  it('retries a transient failure with backoff, then completes', async () => {
    const w = worker();
    w.start();
    const { jobId } = await submit({ key: 'busy-once', behavior: 'busy-once' });
    await until(async () => (await row(jobId)).status === 'completed');
    await w.stop(1000);
    expect(await row(jobId)).toMatchObject({
      attempts: 2,
      last_error: expect.stringContaining('RENDERER_BUSY'),
      error_code: null,
    });
    expect((await transactions()).filter((t) => t.transaction_type === 'REFUND')).toHaveLength(0);
  });

  it('fails a permanent error at once: one REFUND, error fields, a pdf.failed delivery in the same transaction', async () => {
    const w = worker();
    w.start();
    const { jobId } = await submit({ key: 'broken', behavior: 'template-error' }, 'https://hooks.example.com/x');
    await until(async () => (await row(jobId)).status === 'failed');
    await w.stop(1000);
    const job = await row(jobId);
    expect(job).toMatchObject({
      attempts: 1,
      error_code: 'TEMPLATE_RENDER_ERROR',
      error_message: 'items is undefined (line 3)',
    });
    expect(documents.calls.get('broken')).toBe(1);
    const refunds = (await transactions()).filter((t) => t.refund_of === job.transaction_ref);
    expect(refunds).toEqual([expect.objectContaining({ transaction_type: 'REFUND', credits: -1 })]);
    const deliveries = await database.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('job_id', '=', jobId)
      .execute();
    expect(deliveries).toHaveLength(1);
    expect(JSON.parse(deliveries[0]!.payload)).toEqual({
      event: 'pdf.failed',
      job_id: jobId,
      status: 'failed',
      error: { code: 'TEMPLATE_RENDER_ERROR', message: 'items is undefined (line 3)' },
    });
    expect(deliveries[0]!.id).toMatch(/^msg_[A-Za-z0-9]{24}$/);
    expect(deliveries[0]!.secret).not.toContain('ssss');
    expect(webhooks.openSecret(deliveries[0]!.secret!)).toBe('s'.repeat(16));
  });

  it('gives up after maxAttempts transient failures, refunding once', async () => {
    const w = worker({ maxAttempts: 3 });
    w.start();
    const { jobId } = await submit({ key: 'always-busy', behavior: 'always-busy' });
    await until(async () => (await row(jobId)).status === 'failed');
    await w.stop(1000);
    expect(await row(jobId)).toMatchObject({
      attempts: 3,
      error_code: 'RENDERER_BUSY',
      error_message: 'Gave up after 3 attempts: busy',
    });
    expect(documents.calls.get('always-busy')).toBe(3);
    const job = await row(jobId);
    expect((await transactions()).filter((t) => t.refund_of === job.transaction_ref)).toHaveLength(1);
  });

  it('gives a document that keeps timing out one retry only, not maxAttempts, refunding once', async () => {
    const w = worker({ maxAttempts: 5 });
    w.start();
    const { jobId } = await submit({ key: 'always-timeout', behavior: 'always-timeout' });
    await until(async () => (await row(jobId)).status === 'failed');
    await w.stop(1000);
    const job = await row(jobId);
    expect(job).toMatchObject({
      attempts: 2,
      error_code: 'RENDER_TIMEOUT',
      error_message: 'Gave up after 2 attempts: The document did not finish rendering within 30 s',
    });
    expect(documents.calls.get('always-timeout')).toBe(2);
    expect((await transactions()).filter((t) => t.refund_of === job.transaction_ref)).toHaveLength(1);
  });

  it("re-claims a dead worker's job after its lease, completes it once, and the dead worker cannot complete it", async () => {
    const { jobId } = await submit({ key: 'orphan' });
    const [claimed] = await store.claimJobs(database, {
      workerId: 'dead-worker',
      limit: 1,
      now: Date.now(),
      leaseMs: 400,
    });
    expect(claimed).toMatchObject({ id: jobId, status: 'processing', locked_by: 'dead-worker', attempts: 1 });
    const w = worker();
    w.start();
    await until(async () => (await row(jobId)).status === 'completed');
    await w.stop(1000);
    const job = await row(jobId);
    expect(job.attempts).toBe(2);
    expect(job.completed_at! - job.created_at).toBeGreaterThanOrEqual(350);
    const late = await store.completeJob(
      database.db,
      jobId,
      'dead-worker',
      { url: 'x', filename: 'x', expiresAt: 0, s3Bucket: null, s3Key: null },
      Date.now(),
    );
    expect(late).toBe(false);
    expect(await row(jobId)).toMatchObject({ status: 'completed', result_url: expect.stringContaining('orphan') });
  });

  it('gives up on a job that keeps losing its worker (JOB_INTERRUPTED) and refunds it', async () => {
    const { jobId } = await submit({ key: 'poison' });
    await database.db
      .updateTable('jobs')
      .set({ status: 'processing', attempts: 3, locked_by: 'gone', locked_until: Date.now() - 1 })
      .where('id', '=', jobId)
      .execute();
    const w = worker({ maxAttempts: 3 });
    w.start();
    await until(async () => (await row(jobId)).status === 'failed');
    await w.stop(1000);
    expect(await row(jobId)).toMatchObject({ error_code: 'JOB_INTERRUPTED' });
    expect(documents.calls.get('poison')).toBeUndefined();
    const job = await row(jobId);
    expect((await transactions()).filter((t) => t.refund_of === job.transaction_ref)).toHaveLength(1);
  });

  it('on stop, lets the grace period pass, then hands unfinished jobs back to the queue uncounted', async () => {
    const w = worker();
    w.start();
    const { jobId } = await submit({ key: 'hang', behavior: 'hang' });
    await until(async () => (await row(jobId)).status === 'processing');
    await w.stop(100);
    expect(await row(jobId)).toMatchObject({ status: 'pending', attempts: 0, locked_by: null, locked_until: null });
    await database.db.updateTable('jobs').set({ status: 'failed' }).where('id', '=', jobId).execute();
  });

  it(
    dialect === 'postgres'
      ? 'wakes an idle worker in another process at once (LISTEN/NOTIFY)'
      : 'wakes an idle worker at once (in process)',
    async () => {
      // On PostgreSQL the worker gets wake-ups of its own (another "process"): only NOTIFY can reach it.
      const own = dialect === 'postgres' ? await createJobWakeups(database, logger) : wakeups;
      // A ten-minute poll interval: once the worker's first claim has found nothing, only the wake-up can
      // explain the job completing within the deadline below. (Were the first claim slower than the
      // pause, it would take the job itself: the test would prove less, never fail wrongly.)
      const idle = createJobWorker({
        database,
        documents,
        templates: createTemplateService(database.db, { dialect: database.dialect }),
        charges: charges(),
        webhooks,
        wakeups: own,
        jobs: { workerConcurrency: 1, leaseMs: 2000, maxAttempts: 3, pollIntervalMs: 600_000, retryBaseDelayMs: 20 },
        logger,
      });
      workers.push(idle);
      idle.start();
      await new Promise((r) => setTimeout(r, 300));
      const { jobId } = await submit({ key: 'wake' });
      await until(async () => (await row(jobId)).status === 'completed', 120_000);
      await idle.stop(1000);
      if (own !== wakeups) await own.close();
    },
  );
});
