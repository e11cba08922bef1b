/** SQL for the asset library: a row per name (its current revision) and every kept revision's file. */
import { sql } from 'kysely';
import type { Dialect, DbOrTx, Tx } from '../db/database.js';
import type { AssetRevisionsTable } from '../db/schema.js';

/** A name with its current revision's file. */
export interface CurrentAsset extends AssetRevisionsTable {
  /** First upload under the name (the revision's own `created_at` is its upload). */
  name_created_at: number;
  updated_at: number;
}

function currentAssets(db: DbOrTx, accountId: string) {
  return db
    .selectFrom('assets as a')
    .innerJoin('asset_revisions as r', (join) =>
      join
        .onRef('r.account_id', '=', 'a.account_id')
        .onRef('r.name', '=', 'a.name')
        .onRef('r.revision', '=', 'a.revision'),
    )
    .selectAll('r')
    .select(['a.created_at as name_created_at', 'a.updated_at'])
    .where('a.account_id', '=', accountId);
}

export async function findAsset(db: DbOrTx, accountId: string, name: string): Promise<CurrentAsset | undefined> {
  return currentAssets(db, accountId).where('a.name', '=', name).executeTakeFirst();
}

export async function listAssets(db: DbOrTx, accountId: string): Promise<CurrentAsset[]> {
  return currentAssets(db, accountId).orderBy('a.name').execute();
}

/** The account's revisions (of `name` only, or of these names, when given), ascending by name and seq. */
export async function listRevisions(
  db: DbOrTx,
  accountId: string,
  name?: string | readonly string[],
): Promise<AssetRevisionsTable[]> {
  let query = db.selectFrom('asset_revisions').selectAll().where('account_id', '=', accountId);
  if (typeof name === 'string') query = query.where('name', '=', name);
  else if (name !== undefined) query = query.where('name', 'in', [...name]);
  return query.orderBy('name').orderBy('seq').execute();
}

/** The account's revisions that are not their name's current one: those only versions keep. */
export async function listEarlierRevisions(db: DbOrTx, accountId: string): Promise<AssetRevisionsTable[]> {
  return db
    .selectFrom('asset_revisions as r')
    .innerJoin('assets as a', (join) => join.onRef('a.account_id', '=', 'r.account_id').onRef('a.name', '=', 'r.name'))
    .selectAll('r')
    .where('r.account_id', '=', accountId)
    .whereRef('r.revision', '<>', 'a.revision')
    .execute();
}

export async function findRevision(
  db: DbOrTx,
  accountId: string,
  name: string,
  revision: number,
): Promise<AssetRevisionsTable | undefined> {
  return db
    .selectFrom('asset_revisions')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('name', '=', name)
    .where('revision', '=', revision)
    .executeTakeFirst();
}

/** The newest revision of `name` uploaded at or before count `seq`: what a version pinned at `seq` prints. */
export async function findRevisionAt(
  db: DbOrTx,
  accountId: string,
  name: string,
  seq: number,
): Promise<AssetRevisionsTable | undefined> {
  return db
    .selectFrom('asset_revisions')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('name', '=', name)
    .where('seq', '<=', seq)
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** Bytes every kept revision of the account's assets takes. */
export async function accountBytes(db: DbOrTx, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('asset_revisions')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('size'), eb.lit(0)).as('total'))
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return Number(row?.total ?? 0);
}

/**
 * Makes `trx` the only transaction writing `accountId`'s assets until it ends, so that its quota
 * check and its insert are one step (issue 37: twenty concurrent uploads each saw room for itself),
 * and a version published meanwhile either pins before or after it (issue 50).
 * SQLite: nothing to do, BEGIN IMMEDIATE (database.ts) already holds the one write lock, across
 * processes too. PostgreSQL: a transaction-scoped advisory lock on the account; READ COMMITTED
 * alone would let two transactions each sum the other's row out.
 */
export async function lockAccountAssets(trx: Tx, dialect: Dialect, accountId: string): Promise<void> {
  if (dialect !== 'postgres') return;
  await sql`select pg_advisory_xact_lock(hashtextextended(${`pressroom.assets:${accountId}`}, 0))`.execute(trx);
}

/** The account's asset counter now (0 before its first upload). */
export async function currentSeq(db: DbOrTx, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('asset_counters')
    .select('last_seq')
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return Number(row?.last_seq ?? 0);
}

/** Raises the account's asset counter and returns the new count (never one given out before). */
export async function nextSeq(db: DbOrTx, accountId: string): Promise<number> {
  const row = await db
    .insertInto('asset_counters')
    .values({ account_id: accountId, last_seq: 1 })
    .onConflict((oc) => oc.column('account_id').doUpdateSet({ last_seq: sql`asset_counters.last_seq + 1` }))
    .returning('last_seq')
    .executeTakeFirstOrThrow();
  return Number(row.last_seq);
}

export async function insertRevision(db: DbOrTx, row: AssetRevisionsTable): Promise<void> {
  await db.insertInto('asset_revisions').values(row).execute();
}

/** Points the name at `revision` (a new name starts at `now`). */
export async function setCurrentRevision(
  db: DbOrTx,
  accountId: string,
  name: string,
  revision: number,
  now: number,
): Promise<void> {
  await db
    .insertInto('assets')
    .values({ account_id: accountId, name, revision, created_at: now, updated_at: now })
    .onConflict((oc) => oc.columns(['account_id', 'name']).doUpdateSet({ revision, updated_at: now }))
    .execute();
}

export async function deleteRevision(db: DbOrTx, accountId: string, name: string, revision: number): Promise<void> {
  await db
    .deleteFrom('asset_revisions')
    .where('account_id', '=', accountId)
    .where('name', '=', name)
    .where('revision', '=', revision)
    .execute();
}

/** Deletes the name and every revision of it; false when the account has no such name. */
export async function deleteAsset(db: DbOrTx, accountId: string, name: string): Promise<boolean> {
  await db.deleteFrom('asset_revisions').where('account_id', '=', accountId).where('name', '=', name).execute();
  const result = await db
    .deleteFrom('assets')
    .where('account_id', '=', accountId)
    .where('name', '=', name)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
