import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../db/database.js';
import { createCreditLedger, MAX_BALANCE, MAX_GRANT_CREDITS, type CreditLedger } from './ledger.js';
import { sumTransactionCredits } from './ledger-store.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../test/support/databases.js';
import { isAppError } from '../shared/errors.js';
import { TEST_PG_URL } from '../../test/support/global-setup.js';
import { join } from 'node:path';

describe.each(DIALECTS)('credits ledger on %s', (dialect) => {
  let testDb: TestDatabase;
  let handle: DatabaseHandle;
  let ledger: CreditLedger;

  beforeAll(async () => {
    testDb = await createTestDatabase(dialect);
    handle = await openDatabase({
      dialect,
      url: dialect === 'postgres' ? TEST_PG_URL : undefined,
      sqlitePath: join(testDb.dataDir, 'ledger.db'),
      pgSchema: testDb.pgSchema,
      poolSize: 20,
    });
    ledger = createCreditLedger(handle.db);
  });
  afterAll(async () => {
    await handle.close();
    await testDb.dispose();
  });

  async function newAccount(id: string): Promise<string> {
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
    return id;
  }

  async function expectBalanced(accountId: string): Promise<number> {
    const balance = await ledger.balance(accountId);
    expect(balance).toBe(0 - (await sumTransactionCredits(handle.db, accountId)));
    expect(balance).toBeGreaterThanOrEqual(0);
    return balance;
  }

  it('grants, debits and refunds with one transaction row per change', async () => {
    const id = await newAccount('acc_basic');
    expect(await ledger.grant(id, 3, 'BONUS')).toBe(3);
    expect(await ledger.grant(id, 2, 'PURCHASE')).toBe(5);
    const debit = await ledger.debit(id, 'tmpl00000001');
    expect(debit.balance).toBe(4);
    await ledger.recordExecTime(debit.transactionRef, 123.4);
    expect(await ledger.refund(id, debit.transactionRef)).toBe(true);
    expect(await ledger.refund(id, debit.transactionRef)).toBe(false);
    expect(await expectBalanced(id)).toBe(5);

    const { transactions, total } = await ledger.list(id, { limit: 10, offset: 0 });
    expect(total).toBe(4);
    expect(transactions.map((t) => [t.transaction_type, t.credits])).toEqual([
      ['REFUND', -1],
      ['PDFGEN', 1],
      ['PURCHASE', -2],
      ['BONUS', -3],
    ]);
    expect(transactions[1]).toMatchObject({ template_id: 'tmpl00000001', exec_tm: 123 });
    expect(transactions[0]!.template_id).toBeNull();
  });

  it('refuses a debit at zero with INSUFFICIENT_CREDITS and writes nothing', async () => {
    const id = await newAccount('acc_empty');
    const error = await ledger.debit(id, 'tmpl00000001').catch((e) => e);
    expect(isAppError(error, 'INSUFFICIENT_CREDITS')).toBe(true);
    expect((await ledger.list(id, { limit: 10, offset: 0 })).total).toBe(0);
    expect(await expectBalanced(id)).toBe(0);
  });

  it('gives exactly 5 successes to 20 concurrent debits against 5 credits', async () => {
    const id = await newAccount('acc_race');
    await ledger.grant(id, 5, 'BONUS');
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => ledger.debit(id, 'tmpl00000001')));
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected');
    expect(ok).toHaveLength(5);
    expect(refused.every((r) => isAppError((r as PromiseRejectedResult).reason, 'INSUFFICIENT_CREDITS'))).toBe(true);
    expect(await expectBalanced(id)).toBe(0);
    expect(
      (await ledger.list(id, { limit: 100, offset: 0 })).transactions.filter((t) => t.transaction_type === 'PDFGEN'),
    ).toHaveLength(5);
  });

  it('refunds a generation once even when refunds race', async () => {
    const id = await newAccount('acc_refund_race');
    await ledger.grant(id, 1, 'BONUS');
    const debit = await ledger.debit(id, 'tmpl00000001');
    const results = await Promise.all(Array.from({ length: 10 }, () => ledger.refund(id, debit.transactionRef)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await expectBalanced(id)).toBe(1);
  });

  it('keeps the invariant under a mixed concurrent load', async () => {
    const id = await newAccount('acc_mixed');
    await ledger.grant(id, 10, 'BONUS');
    const work = Array.from({ length: 40 }, async (_, i) => {
      if (i % 4 === 0) return ledger.grant(id, 1, 'PURCHASE');
      const debit = await ledger.debit(id, 'tmpl00000001').catch(() => null);
      if (debit && i % 3 === 0) await ledger.refund(id, debit.transactionRef);
      return debit;
    });
    await Promise.all(work);
    await expectBalanced(id);
  });

  it('rejects a non-positive grant and an unknown account', async () => {
    const id = await newAccount('acc_grants');
    expect(isAppError(await ledger.grant(id, 0, 'BONUS').catch((e) => e), 'INVALID_REQUEST')).toBe(true);
    expect(isAppError(await ledger.grant('acc_missing', 1, 'BONUS').catch((e) => e), 'ACCOUNT_NOT_FOUND')).toBe(true);
    expect((await ledger.list('acc_missing', { limit: 10, offset: 0 })).total).toBe(0);
    expect(isAppError(await ledger.grant(id, MAX_GRANT_CREDITS + 1, 'BONUS').catch((e) => e), 'INVALID_REQUEST')).toBe(
      true,
    );
    expect(await expectBalanced(id)).toBe(0);
  });

  it('never takes a balance past MAX_BALANCE, even under concurrent grants', async () => {
    const id = await newAccount('acc_ceiling');
    await ledger.grant(id, MAX_GRANT_CREDITS, 'PURCHASE');
    const step = 100_000_000;
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, () =>
        ledger.grant(id, step, 'BONUS').then(
          () => 'granted',
          (e) => (isAppError(e, 'BALANCE_LIMIT_EXCEEDED') ? 'refused' : e),
        ),
      ),
    );
    expect(outcomes.filter((o) => o === 'granted')).toHaveLength((MAX_BALANCE - MAX_GRANT_CREDITS) / step);
    expect(outcomes.filter((o) => o === 'refused')).toHaveLength(20 - (MAX_BALANCE - MAX_GRANT_CREDITS) / step);
    expect(await expectBalanced(id)).toBe(MAX_BALANCE);
  });

  it('lets a refund land on an account a grant filled up while the debit was in flight', async () => {
    const id = await newAccount('acc_full_refund');
    await ledger.grant(id, MAX_GRANT_CREDITS, 'PURCHASE');
    await ledger.grant(id, MAX_BALANCE - MAX_GRANT_CREDITS, 'PURCHASE');
    const debit = await ledger.debit(id, 'tmpl00000001');
    expect(await ledger.grant(id, 1, 'BONUS')).toBe(MAX_BALANCE);
    expect(await ledger.refund(id, debit.transactionRef)).toBe(true);
    expect(await expectBalanced(id)).toBe(MAX_BALANCE + 1);
  });
});
