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
  return db
    .selectFrom('idempotency_keys')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('idem_key', '=', key)
    .executeTakeFirst();
}

/**
 * Takes over a pending key whose lease ran out (its request died with its process): true when this
 * caller now holds it. Rows from before leases existed (null lease) count as expired.
 */
export async function takeOverExpiredKey(
  db: DbOrTx,
  accountId: string,
  key: string,
  holder: string,
  now: number,
  leaseUntil: number,
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ holder, lease_until: leaseUntil })
    .where('account_id', '=', accountId)
    .where('idem_key', '=', key)
    .where('state', '=', 'pending')
    .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Stores the answer; only the holder of a pending key may (false when another process took it over). */
export async function completeKey(
  db: DbOrTx,
  accountId: string,
  key: string,
  holder: string,
  response: string,
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ state: 'done', response, holder: null, lease_until: null })
    .where('account_id', '=', accountId)
    .where('idem_key', '=', key)
    .where('holder', '=', holder)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Extends the leases of the keys this process still works on. */
export async function renewKeys(db: DbOrTx, holder: string, keys: string[], leaseUntil: number): Promise<void> {
  if (keys.length === 0) return;
  await db
    .updateTable('idempotency_keys')
    .set({ lease_until: leaseUntil })
    .where('holder', '=', holder)
    .where('state', '=', 'pending')
    .where('idem_key', 'in', keys)
    .execute();
}

/** Frees a pending key its holder gave up on (the request failed and was refunded). */
export async function releaseKey(db: DbOrTx, accountId: string, key: string, holder: string): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('account_id', '=', accountId)
    .where('idem_key', '=', key)
    .where('state', '=', 'pending')
    .where('holder', '=', holder)
    .execute();
}

export async function deleteExpiredKey(db: DbOrTx, accountId: string, key: string, now: number): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('account_id', '=', accountId)
    .where('idem_key', '=', key)
    .where('expires_at', '<=', now)
    .execute();
}

export async function deleteExpiredKeys(db: DbOrTx, now: number): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
