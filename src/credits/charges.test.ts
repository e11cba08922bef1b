/**
 * Charges on real SQLite and PostgreSQL: a reservation resolves exactly once — posted or voided —
 * whatever races it, and one whose process stopped renewing it is voided by any other process.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../db/database.js';
import { createLogger } from '../shared/log.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../test/support/databases.js';
import { TEST_PG_URL } from '../../test/support/global-setup.js';
import { createCharges, type Charges } from './charges.js';
import { createCreditLedger, type CreditLedger } from './ledger.js';
import { sumTransactionCredits } from './ledger-store.js';

const logger = createLogger('silent');

describe.each(DIALECTS)('charges on %s', (dialect) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let ledger: CreditLedger;
  /** Two processes sharing one database. */
  let here: Charges;
  let elsewhere: Charges;

  beforeAll(async () => {
    testDb = await createTestDatabase(dialect);
    handle = await openDatabase({
      dialect,
      url: dialect === 'postgres' ? TEST_PG_URL : undefined,
      sqlitePath: join(testDb.dataDir, 'charges.db'),
      pgSchema: testDb.pgSchema,
      poolSize: 20,
    });
    ledger = createCreditLedger(handle.db);
    here = createCharges({ db: handle.db, ledger, instanceId: 'host:1:here', leaseMs: 60_000, logger });
    elsewhere = createCharges({ db: handle.db, ledger, instanceId: 'host:2:else', leaseMs: 60_000, logger });
  });
  afterAll(async () => {
    await handle.close();
    await testDb.dispose();
  });

  async function account(id: string, credits: number): Promise<string> {
    await handle.db
      .insertInto('accounts')
      .values({
        id,
        email: null,
        plan: 'free',
        credits: 0,
        rate_limit_per_minute: null,
        rate_limit_per_day: null,
        created_at: Date.now(),
      })
      .execute();
    await ledger.grant(id, credits, 'BONUS');
    return id;
  }
  const types = async (id: string) =>
    (await ledger.list(id, { limit: 100, offset: 0 })).transactions.map((t) => t.transaction_type).sort();
  async function expectBalanced(id: string): Promise<number> {
    const balance = await ledger.balance(id);
    expect(balance).toBe(0 - (await sumTransactionCredits(handle.db, id)));
    return balance;
  }

  it('reserves at once (the balance drops), posts once, and a later void changes nothing', async () => {
    const id = await account('acc_post', 2);
    const r = await here.reserve(id, 'tmpl00000001', { request: true });
    expect(r.balance).toBe(1);
    expect(await here.pendingCount(id)).toBe(1);
    expect(await here.post(r, 42)).toBe(true);
    expect(await here.void(r)).toBe(false);
    expect(await here.pendingCount(id)).toBe(0);
    expect(await types(id)).toEqual(['BONUS', 'PDFGEN']);
    expect(
      (await ledger.list(id, { limit: 100, offset: 0 })).transactions.find((t) => t.transaction_type === 'PDFGEN')
        ?.exec_tm,
    ).toBe(42);
    expect(await expectBalanced(id)).toBe(1);
  });

  it('voids once with exactly one REFUND, and a later post does not charge', async () => {
    const id = await account('acc_void', 1);
    const r = await here.reserve(id, 'tmpl00000001', { request: true });
    expect(await here.void(r)).toBe(true);
    expect(await here.void(r)).toBe(false);
    expect(await here.post(r, 1)).toBe(false);
    expect(await types(id)).toEqual(['BONUS', 'PDFGEN', 'REFUND']);
    expect(await expectBalanced(id)).toBe(1);
  });

  it('resolves racing posts and voids from two processes exactly once each', async () => {
    const id = await account('acc_race', 20);
    const reservations = await Promise.all(
      Array.from({ length: 20 }, () => here.reserve(id, 'tmpl00000001', { request: true })),
    );
    expect(await ledger.balance(id)).toBe(0);
    const outcomes = await Promise.all(
      reservations.map((r, i) =>
        Promise.all([i % 2 === 0 ? here.post(r, 1) : here.void(r), elsewhere.void(r), elsewhere.post(r, 1)]),
      ),
    );
    // Exactly one of the three calls on each reservation resolved it.
    for (const calls of outcomes) expect(calls.filter(Boolean)).toHaveLength(1);
    const refunds = (await ledger.list(id, { limit: 100, offset: 0 })).transactions.filter(
      (t) => t.transaction_type === 'REFUND',
    ).length;
    expect(await expectBalanced(id)).toBe(refunds);
    expect(await here.pendingCount(id)).toBe(0);
  });

  it('voids, from another process, a reservation whose lease ran out — never one still renewed', async () => {
    const id = await account('acc_lease', 3);
    const dead = createCharges({ db: handle.db, ledger, instanceId: 'host:3:dead', leaseMs: 1000, logger });
    const alive = createCharges({ db: handle.db, ledger, instanceId: 'host:4:alive', leaseMs: 1000, logger });
    const orphan = await dead.reserve(id, 'tmpl00000001', { request: true });
    const working = await alive.reserve(id, 'tmpl00000001', { request: true });
    const job = await here.reserve(id, 'tmpl00000001', { jobId: 'job-1' });
    // Recovery judges by the clock it is given: 10 s later, with only `alive` having renewed.
    const later = Date.now() + 10_000;
    await alive.renewHeld(later);
    expect(await elsewhere.recoverExpired(later)).toBe(1);
    expect(await elsewhere.recoverExpired(later)).toBe(0);
    expect(await ledger.balance(id)).toBe(1);
    // The dead request's credit came back once; the live one and the job's are still pending.
    expect(await here.pendingCount(id)).toBe(2);
    expect(await dead.post(orphan, 1)).toBe(false);
    expect(await alive.post(working, 1)).toBe(true);
    expect(await here.void(job)).toBe(true);
    expect(await types(id)).toEqual(['BONUS', 'PDFGEN', 'PDFGEN', 'PDFGEN', 'REFUND', 'REFUND']);
    expect(await expectBalanced(id)).toBe(2);
  });

  it("voids many in one go (a batch's chunk): each unresolved one refunded exactly once, the resolved ones left alone", async () => {
    const id = await account('acc_many', 6);
    const { transactionRefs } = await handle.db
      .transaction()
      .execute((trx) =>
        here.reserveForJobs(
          id,
          { subject: 'tmpl00000001', jobIds: ['j1', 'j2', 'j3', 'j4', 'j5'], batchId: null },
          trx,
        ),
      );
    const refs = transactionRefs.map((transactionRef) => ({ transactionRef, accountId: id }));
    expect(await here.post(refs[0]!, 1)).toBe(true);
    expect(await here.void(refs[1]!)).toBe(true);
    expect(await handle.db.transaction().execute((trx) => elsewhere.voidMany(refs, trx))).toBe(3);
    expect(await handle.db.transaction().execute((trx) => here.voidMany(refs, trx))).toBe(0);
    expect(await types(id)).toEqual([
      'BONUS',
      'PDFGEN',
      'PDFGEN',
      'PDFGEN',
      'PDFGEN',
      'PDFGEN',
      'REFUND',
      'REFUND',
      'REFUND',
      'REFUND',
    ]);
    expect(await here.pendingCount(id)).toBe(0);
    expect(await expectBalanced(id)).toBe(5);
  });

  it('refuses a reservation at zero credits and writes nothing', async () => {
    const id = await account('acc_zero', 1);
    await here.reserve(id, 'tmpl00000001', { request: true });
    await expect(here.reserve(id, 'tmpl00000001', { request: true })).rejects.toMatchObject({
      code: 'INSUFFICIENT_CREDITS',
    });
    expect(await here.pendingCount(id)).toBe(1);
    expect(await expectBalanced(id)).toBe(0);
  });
});
