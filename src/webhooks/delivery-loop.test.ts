/**
 * Webhook deliveries against a real loopback receiver, on SQLite and PostgreSQL: retries keep the
 * webhook-id, signatures verify with a reference HMAC, 3xx/timeouts/refused addresses are failures,
 * the schedule gives up after maxAttempts, and a restarted loop resumes what was pending.
 */
import { createHmac } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../db/database.js';
import { createGuardedDispatcher } from '../net/guarded-dispatcher.js';
import { createLogger } from '../shared/log.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../test/support/databases.js';
import { TEST_PG_URL } from '../../test/support/global-setup.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../test/support/webhook-receiver.js';
import { createDeliveryLoop, type DeliveryLoop, type DeliveryLoopOptions } from './delivery-loop.js';
import { completedPayload } from './webhook-payloads.js';
import { createWebhookQueue } from './webhook-queue.js';

const logger = createLogger('silent');
const SECRET = 'receiver-secret-0123456789';

describe.each(DIALECTS)('webhook deliveries on %s', (dialect) => {
  let testDb: TestDatabase;
  let database: DatabaseHandle;
  let receiver: WebhookReceiver;
  const queue = createWebhookQueue('m'.repeat(40));
  const loops: DeliveryLoop[] = [];
  let jobSeq = 0;

  const loop = (overrides: Partial<DeliveryLoopOptions> = {}) => {
    const l = createDeliveryLoop({
      database,
      queue,
      workerId: `w${loops.length}`,
      timeoutMs: 2000,
      maxAttempts: 4,
      baseDelayMs: 20,
      accountConcurrency: 4,
      pollIntervalMs: 50,
      allowPrivateNetworks: true,
      logger,
      ...overrides,
    });
    loops.push(l);
    l.start();
    return l;
  };
  /** A finished job with a delivery to `url`, as the worker would leave it. */
  const enqueue = async (url: string, secret: string | null = SECRET) => {
    const jobId = `job-${++jobSeq}`;
    const now = Date.now();
    await database.db
      .insertInto('jobs')
      .values({
        id: jobId,
        account_id: 'acc_w',
        template_id: 'tttttttttttt',
        status: 'completed',
        data: '{}',
        options: '{}',
        filename: null,
        store_s3: 0,
        webhook_url: url,
        webhook_secret: null,
        transaction_ref: `tx-${jobId}`,
        attempts: 1,
        run_at: now,
        locked_by: null,
        locked_until: null,
        last_error: null,
        error_code: null,
        error_message: null,
        result_url: null,
        result_filename: null,
        result_expires_at: null,
        result_s3_bucket: null,
        result_s3_key: null,
        created_at: now,
        updated_at: now,
        started_at: now,
        completed_at: now,
      })
      .execute();
    const payload = completedPayload(jobId, { url: 'https://files.example/a.pdf', filename: 'a.pdf' });
    await database.db.transaction().execute((trx) =>
      queue.enqueue(trx, {
        jobId,
        event: 'pdf.completed',
        url,
        sealedSecret: secret && queue.sealSecret(secret),
        payload,
      }),
    );
    queue.announce();
    return { jobId, payload };
  };
  const delivery = (jobId: string) =>
    database.db.selectFrom('webhook_deliveries').selectAll().where('job_id', '=', jobId).executeTakeFirstOrThrow();
  const until = async (what: () => Promise<boolean>, timeoutMs = 10_000) => {
    const end = Date.now() + timeoutMs;
    while (!(await what())) {
      if (Date.now() > end) throw new Error('timed out');
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  beforeAll(async () => {
    testDb = await createTestDatabase(dialect);
    database = await openDatabase({
      dialect,
      url: dialect === 'postgres' ? TEST_PG_URL : undefined,
      sqlitePath: `${testDb.dataDir}/w.db`,
      pgSchema: testDb.pgSchema,
    });
    await database.db
      .insertInto('accounts')
      .values({
        id: 'acc_w',
        email: null,
        plan: 'pro',
        credits: 0,
        rate_limit_per_minute: null,
        rate_limit_per_day: null,
        created_at: Date.now(),
      })
      .execute();
    receiver = await startWebhookReceiver();
  });
  beforeEach(() => {
    receiver.received.length = 0;
    receiver.script([200]);
  });
  afterEach(async () => {
    // With a grace period: a stop without one releases in-flight attempts, which the next test's loop would re-send.
    await Promise.all(loops.splice(0).map((l) => l.stop(5000)));
  });
  afterAll(async () => {
    await receiver?.close();
    await database?.close();
    await testDb?.dispose();
  });

  it('retries 500, 500, then 200 with the same webhook-id, and both signatures verify', async () => {
    receiver.script([500, 500, 200]);
    const { jobId, payload } = await enqueue(receiver.url);
    loop();
    const got = await receiver.waitFor(3);
    await until(async () => (await delivery(jobId)).state === 'delivered');
    expect(got.map((g) => g.answered)).toEqual([500, 500, 200]);
    const ids = new Set(got.map((g) => g.headers['webhook-id']));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toBe((await delivery(jobId)).id);
    for (const g of got) {
      expect(g.raw.toString('utf8')).toBe(payload);
      expect(g.headers['content-type']).toBe('application/json');
      expect(g.headers['user-agent']).toBe('Pressroom-Webhooks/1');
      const hex = createHmac('sha256', Buffer.from(SECRET, 'utf8')).update(g.raw).digest('hex');
      expect(g.headers['x-service-signature']).toBe(hex);
      const ts = String(g.headers['webhook-timestamp']);
      expect(Math.abs(Number(ts) - Date.now() / 1000)).toBeLessThan(30);
      const std = createHmac('sha256', Buffer.from(SECRET, 'utf8'))
        .update(`${g.headers['webhook-id']}.${ts}.`)
        .update(g.raw)
        .digest('base64');
      expect(g.headers['webhook-signature']).toBe(`v1,${std}`);
    }
    expect(await delivery(jobId)).toMatchObject({ attempts: 3, last_status: 200, last_error: null, locked_by: null });
    // Backoff: the retries were not sent back to back (floors 20 ms, then 40 ms).
    expect(got[1]!.receivedAt - got[0]!.receivedAt).toBeGreaterThanOrEqual(15);
    expect(got[2]!.receivedAt - got[1]!.receivedAt).toBeGreaterThanOrEqual(35);
  });

  it('sends no signature without a secret, but always webhook-id and webhook-timestamp', async () => {
    await enqueue(receiver.url, null);
    loop();
    const [g] = await receiver.waitFor(1);
    expect(g!.headers['webhook-id']).toMatch(/^msg_/);
    expect(g!.headers['webhook-timestamp']).toMatch(/^\d{10}$/);
    expect(g!.headers['webhook-signature']).toBeUndefined();
    expect(g!.headers['x-service-signature']).toBeUndefined();
  });

  it('treats a redirect as a failure and does not follow it', async () => {
    receiver.script([302], { headers: { location: '/elsewhere' } });
    const { jobId } = await enqueue(receiver.url);
    loop({ maxAttempts: 2 });
    await until(async () => (await delivery(jobId)).state === 'failed');
    expect(receiver.received.map((r) => r.path)).toEqual(['/hooks/pressroom', '/hooks/pressroom']);
    expect(await delivery(jobId)).toMatchObject({
      attempts: 2,
      last_status: 302,
      last_error: 'receiver answered HTTP 302',
    });
  });

  it('times out a receiver that does not answer, and retries', async () => {
    receiver.script([200], { delayMs: 1500 });
    const { jobId } = await enqueue(receiver.url);
    loop({ timeoutMs: 300, maxAttempts: 2 });
    await until(async () => (await delivery(jobId)).state === 'failed');
    expect(await delivery(jobId)).toMatchObject({
      attempts: 2,
      last_status: null,
      last_error: 'no answer within 300 ms',
    });
  });

  it('refuses a name that resolves to a private address (pinned check), without reaching it', async () => {
    const port = new URL(receiver.url).port;
    const dispatcher = createGuardedDispatcher({
      allowPrivateNetworks: false,
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    const { jobId } = await enqueue(`https://hooks.example.com:${port}/hooks/pressroom`);
    loop({ allowPrivateNetworks: false, dispatcher, maxAttempts: 2 });
    await until(async () => (await delivery(jobId)).state === 'failed');
    expect(receiver.received).toHaveLength(0);
    expect((await delivery(jobId)).last_error).toMatch(
      /outbound guard: hooks.example.com resolved to 127.0.0.1 is loopback/,
    );
    await dispatcher.close();
  });

  it('refuses plain http and literal private hosts at send time when private networks are not allowed', async () => {
    const { jobId } = await enqueue(receiver.url);
    loop({ allowPrivateNetworks: false, maxAttempts: 1 });
    await until(async () => (await delivery(jobId)).state === 'failed');
    expect(receiver.received).toHaveLength(0);
    expect((await delivery(jobId)).last_error).toBe('refused: plain http');
  });

  it('resumes pending deliveries after a restart, keeping the webhook-id', async () => {
    receiver.script([503]);
    const { jobId } = await enqueue(receiver.url);
    const first = loop({ baseDelayMs: 60_000 });
    await receiver.waitFor(1);
    await first.stop(1000);
    const pending = await delivery(jobId);
    expect(pending).toMatchObject({ state: 'pending', attempts: 1, last_status: 503 });
    // "Restart": the new process finds the row; make it due now instead of in a minute.
    await database.db
      .updateTable('webhook_deliveries')
      .set({ next_attempt_at: Date.now() })
      .where('id', '=', pending.id)
      .execute();
    receiver.script([200]);
    loop();
    await until(async () => (await delivery(jobId)).state === 'delivered');
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([pending.id, pending.id]);
  });

  it('two loops never send the same attempt twice', async () => {
    const jobIds = await Promise.all(Array.from({ length: 30 }, () => enqueue(receiver.url).then((x) => x.jobId)));
    loop();
    loop();
    await receiver.waitFor(30);
    await until(
      async () =>
        (
          await database.db
            .selectFrom('webhook_deliveries')
            .select('id')
            .where('state', '=', 'delivered')
            .where('job_id', 'in', jobIds)
            .execute()
        ).length === 30,
    );
    // A duplicate would be on its way right behind: a short wait for what must not happen.
    await new Promise((r) => setTimeout(r, 200));
    const perId = new Map<string, number>();
    for (const r of receiver.received)
      perId.set(String(r.headers['webhook-id']), (perId.get(String(r.headers['webhook-id'])) ?? 0) + 1);
    expect(perId.size).toBe(30);
    expect([...perId.values()].every((n) => n === 1)).toBe(true);
  });
});
