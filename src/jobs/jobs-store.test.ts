/**
 * The job claim's order across accounts, on real SQLite and PostgreSQL: round robin by account, so a
 * single job of one account is not queued behind another account's backlog, with one worker slot
 * (claims of one job, each finished before the next) as with several (jobs already running count).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../db/database.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../test/support/databases.js';
import { TEST_PG_URL } from '../../test/support/global-setup.js';
import * as store from './jobs-store.js';

const LEASE_MS = 60_000;

describe.each(DIALECTS)('fair job claim on %s', (dialect) => {
  let testDb: TestDatabase;
  let database: DatabaseHandle;
  let seq = 0;
  let clock = 1_000_000;

  /** A pending job of `accountId`, due now; later calls are younger. */
  const enqueue = async (accountId: string) => {
    const id = `job-${++seq}`;
    clock += 1;
    await database.db
      .insertInto('jobs')
      .values({
        id,
        account_id: accountId,
        template_id: 'tttttttttttt',
        status: 'pending',
        data: '{}',
        options: '{}',
        filename: null,
        store_s3: 0,
        webhook_url: null,
        webhook_secret: null,
        transaction_ref: `tx-${id}`,
        attempts: 0,
        run_at: clock,
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
        created_at: clock,
        updated_at: clock,
        started_at: null,
        completed_at: null,
        request_id: null,
      })
      .execute();
    return id;
  };
  /** Claims up to `limit` jobs at the next tick of the test clock; returns their accounts in claim order. */
  const claim = async (limit: number) => {
    clock += 10;
    const rows = await store.claimJobs(database, { workerId: 'w', limit, now: clock, leaseMs: LEASE_MS });
    return rows;
  };
  const complete = (id: string) =>
    store.completeJob(
      database.db,
      id,
      'w',
      { url: null, filename: 'a.pdf', expiresAt: null, s3Bucket: null, s3Key: null },
      clock,
    );
  const accountOf = async (id: string) =>
    (await database.db.selectFrom('jobs').select('account_id').where('id', '=', id).executeTakeFirstOrThrow())
      .account_id;

  beforeAll(async () => {
    testDb = await createTestDatabase(dialect);
    database = await openDatabase({
      dialect,
      url: dialect === 'postgres' ? TEST_PG_URL : undefined,
      sqlitePath: `${testDb.dataDir}/j.db`,
      pgSchema: testDb.pgSchema,
    });
    for (const id of ['acc_a', 'acc_b', 'acc_c']) {
      await database.db
        .insertInto('accounts')
        .values({
          id,
          email: null,
          plan: 'pro',
          credits: 0,
          rate_limit_per_minute: null,
          rate_limit_per_day: null,
          created_at: 0,
        })
        .execute();
    }
  });
  beforeEach(async () => {
    await database.db.deleteFrom('jobs').execute();
  });
  afterAll(async () => {
    await database?.close();
    await testDb?.dispose();
  });

  it('one slot: each claim finished before the next still takes turns between accounts', async () => {
    for (let i = 0; i < 5; i++) await enqueue('acc_a');
    await enqueue('acc_b');
    await enqueue('acc_c');
    await enqueue('acc_c');
    const order: string[] = [];
    for (;;) {
      const [row] = await claim(1);
      if (!row) break;
      order.push(row.account_id);
      expect(await complete(row.id)).toBe(true);
    }
    // a1 is the oldest; then whoever was served longest ago among equal ranks.
    expect(order).toEqual(['acc_a', 'acc_b', 'acc_c', 'acc_a', 'acc_c', 'acc_a', 'acc_a', 'acc_a']);
  });

  it('several slots: a backlog of 1,000 jobs does not go before another account’s single job', async () => {
    const values = Array.from({ length: 1000 }, (_, i) => i);
    for (const chunk of [values.slice(0, 500), values.slice(500)]) {
      await Promise.all(chunk.map(() => enqueue('acc_a')));
    }
    const single = await enqueue('acc_b');
    const first = await claim(4);
    expect(first.map((r) => r.account_id).sort()).toEqual(['acc_a', 'acc_a', 'acc_a', 'acc_b']);
    expect(first.map((r) => r.id)).toContain(single);
    // The started_at the claim wrote: B's job started with the first batch, when 3 of A's had.
    const started = await database.db
      .selectFrom('jobs')
      .select(['account_id', 'started_at'])
      .where('started_at', 'is not', null)
      .execute();
    expect(started.filter((r) => r.account_id === 'acc_a')).toHaveLength(3);
  });

  it('jobs already running count: with A busy, the next free slot goes to B even though A’s job is older', async () => {
    const a1 = await enqueue('acc_a');
    await enqueue('acc_a');
    await enqueue('acc_b');
    const [running] = await claim(1);
    expect(running!.id).toBe(a1);
    const [next] = await claim(1);
    expect(await accountOf(next!.id)).toBe('acc_b');
  });

  it('a job whose worker died (lease ran out) is due again and ranked with the rest', async () => {
    const a1 = await enqueue('acc_a');
    const [claimed] = await claim(1);
    expect(claimed!.id).toBe(a1);
    clock += LEASE_MS + 1;
    const [again] = await claim(5);
    expect(again).toMatchObject({ id: a1, attempts: 2, status: 'processing' });
  });
});
