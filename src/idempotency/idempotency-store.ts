/** SQL for idempotency keys. */
import type { DbOrTx } from '../db/database.js';
import type { IdempotencyKeysTable } from '../db/schema.js';

/** Claims the key for a first request; false when a row for it already exists. */
export async function claimKey(db: DbOrTx, row: IdempotencyKeysTable): Promise<boolean> {
  const result = await db
    .insertInto('idempotency_keys')
    .values(row)
    .onConflict((oc) => oc.columns(['account_id', 'idem_key']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

export async function findKey(db: DbOrTx, accountId: string, key: string) {
  return db.selectFrom('idempotency_keys').selectAll().where('account_id', '=', accountId).where('idem_key', '=', key).executeTakeFirst();
}

export async function completeKey(db: DbOrTx, accountId: string, key: string, response: string): Promise<void> {
  await db.updateTable('idempotency_keys').set({ state: 'done', response }).where('account_id', '=', accountId).where('idem_key', '=', key).execute();
}

export async function releaseKey(db: DbOrTx, accountId: string, key: string): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('idem_key', '=', key).execute();
}

export async function deleteExpiredKey(db: DbOrTx, accountId: string, key: string, now: number): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('account_id', '=', accountId).where('idem_key', '=', key).where('expires_at', '<=', now).execute();
}

export async function deleteExpiredKeys(db: DbOrTx, now: number): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
