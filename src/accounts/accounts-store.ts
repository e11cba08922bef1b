/** SQL for accounts and API keys. */
import { sql } from 'kysely';
import type { DbOrTx, Tx } from '../db/database.js';
import type { AccountRow } from '../db/schema.js';

export async function insertAccount(db: DbOrTx, row: AccountRow): Promise<void> {
  await db.insertInto('accounts').values(row).execute();
}

export async function findAccount(db: DbOrTx, accountId: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', accountId).executeTakeFirst();
}

export async function insertApiKey(
  db: DbOrTx,
  row: { prefix: string; account_id: string; key_hash: string; created_at: number },
): Promise<void> {
  await db
    .insertInto('api_keys')
    .values({ ...row, revoked_at: null })
    .execute();
}

/** The live (not revoked) key with this prefix, joined to its account. */
export async function findLiveApiKey(db: DbOrTx, prefix: string) {
  return db
    .selectFrom('api_keys')
    .innerJoin('accounts', 'accounts.id', 'api_keys.account_id')
    .select([
      'api_keys.key_hash',
      'api_keys.account_id',
      'accounts.plan',
      'accounts.rate_limit_per_minute',
      'accounts.rate_limit_per_day',
    ])
    .where('api_keys.prefix', '=', prefix)
    .where('api_keys.revoked_at', 'is', null)
    .executeTakeFirst();
}

export async function listApiKeys(db: DbOrTx, accountId: string) {
  return db
    .selectFrom('api_keys')
    .select(['prefix', 'created_at', 'revoked_at'])
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .execute();
}

/** Marks a key revoked (only the given account's, when one is given); false when no live key has this prefix. */
export async function revokeApiKey(
  db: DbOrTx,
  prefix: string,
  revokedAt: number,
  accountId?: string,
): Promise<boolean> {
  let query = db
    .updateTable('api_keys')
    .set({ revoked_at: revokedAt })
    .where('prefix', '=', prefix)
    .where('revoked_at', 'is', null);
  if (accountId) query = query.where('account_id', '=', accountId);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Makes `trx` the only transaction changing the account's keys until it ends, so that counting the live
 * keys and revoking one are one step (two revokes racing for an account's last two keys must not both
 * pass the count). A no-op write of the account row: PostgreSQL holds its row lock to the commit (each
 * later statement of READ COMMITTED sees what the other committed); SQLite's BEGIN IMMEDIATE already
 * holds the one write lock. The same statement on both databases, so no dialect branch.
 */
export async function lockAccountKeys(trx: Tx, accountId: string): Promise<boolean> {
  const result = await trx
    .updateTable('accounts')
    .set({ id: accountId })
    .where('id', '=', accountId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** How many of the account's keys work (not revoked). */
export async function countLiveApiKeys(db: DbOrTx, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number>().as('live'))
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.live);
}

/**
 * Moves the account's token cut-off to `at` (epoch ms), never backwards: a revocation stamped by a
 * process whose clock lags must not bring back tokens an earlier one revoked. Returns the cut-off in
 * force, or undefined when the account does not exist.
 */
export async function raiseTokensValidAfter(db: DbOrTx, accountId: string, at: number): Promise<number | undefined> {
  const row = await db
    .updateTable('accounts')
    .set({
      tokens_valid_after: sql<number>`case when tokens_valid_after > ${at} then tokens_valid_after else ${at} end`,
    })
    .where('id', '=', accountId)
    .returning('tokens_valid_after')
    .executeTakeFirst();
  return row?.tokens_valid_after ?? undefined;
}
