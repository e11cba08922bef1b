/** SQL for the asset library. */
import type { DbOrTx } from '../db/database.js';
import type { AssetsTable } from '../db/schema.js';

export async function findAsset(db: DbOrTx, accountId: string, name: string): Promise<AssetsTable | undefined> {
  return db.selectFrom('assets').selectAll().where('account_id', '=', accountId).where('name', '=', name).executeTakeFirst();
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
  const result = await db.deleteFrom('assets').where('account_id', '=', accountId).where('name', '=', name).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
