/** SQL for the asset library. */
import { sql } from 'kysely';
import type { Dialect, DbOrTx, Tx } from '../db/database.js';
import type { AssetsTable } from '../db/schema.js';

export async function findAsset(db: DbOrTx, accountId: string, name: string): Promise<AssetsTable | undefined> {
  return db
    .selectFrom('assets')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('name', '=', name)
    .executeTakeFirst();
}

export async function listAssets(db: DbOrTx, accountId: string): Promise<AssetsTable[]> {
  return db.selectFrom('assets').selectAll().where('account_id', '=', accountId).orderBy('name').execute();
}

/** Bytes the account's assets take, leaving out `exceptName` (the one an upload would replace). */
export async function accountBytes(db: DbOrTx, accountId: string, exceptName: string): Promise<number> {
  const row = await db
    .selectFrom('assets')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('size'), eb.lit(0)).as('total'))
    .where('account_id', '=', accountId)
    .where('name', '!=', exceptName)
    .executeTakeFirst();
  return Number(row?.total ?? 0);
}

/**
 * Makes `trx` the only transaction writing `accountId`'s assets until it ends, so that its quota
 * check and its insert are one step (issue 37: twenty concurrent uploads each saw room for itself).
 * SQLite: nothing to do, BEGIN IMMEDIATE (database.ts) already holds the one write lock, across
 * processes too. PostgreSQL: a transaction-scoped advisory lock on the account; READ COMMITTED
 * alone would let two transactions each sum the other's row out.
 */
export async function lockAccountAssets(trx: Tx, dialect: Dialect, accountId: string): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`select pg_advisory_xact_lock(hashtextextended(${`pressroom.assets:${accountId}`}, 0))`.execute(trx);
}

/** Inserts the asset, or replaces the row of the same account and name. */
export async function upsertAsset(db: DbOrTx, row: AssetsTable): Promise<void> {
  await db
    .insertInto('assets')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['account_id', 'name']).doUpdateSet({
        content_type: row.content_type,
        size: row.size,
        sha256: row.sha256,
        storage_key: row.storage_key,
        updated_at: row.updated_at,
      }),
    )
    .execute();
}

export async function deleteAsset(db: DbOrTx, accountId: string, name: string): Promise<boolean> {
  const result = await db
    .deleteFrom('assets')
    .where('account_id', '=', accountId)
    .where('name', '=', name)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
