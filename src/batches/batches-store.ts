/**
 * SQL for batches (issue 40). A batch row and its items (job rows with `batch_id`):
 *
 *   pending ──first item settles──▶ processing ──last item settles──▶ completed | completed_with_errors | failed | cancelled
 *                                        │ (zip, merged)
 *                                        └──▶ assembling ──lease, build, store──▶ (the same ends)
 *
 * `settled` moves in the transaction that ends an item (job-worker.ts's hook) or cancels items, so
 * the item that makes it reach `total` is known to exactly one transaction, which moves the batch on.
 */
import { sql, type ExpressionBuilder, type Insertable, type Updateable } from 'kysely';
import type { DatabaseHandle, DbOrTx } from '../db/database.js';
import type { BatchRow, BatchStatus, BatchesTable, Database, JobRow, NewJob } from '../db/schema.js';
import { claimRows, type ClaimRequest } from '../db/claim-rows.js';
import { insertChunked } from '../credits/ledger-store.js';

export async function insertBatch(db: DbOrTx, row: Insertable<BatchesTable>): Promise<void> {
  await db.insertInto('batches').values(row).execute();
}

export async function insertItems(db: DbOrTx, rows: NewJob[]): Promise<void> {
  // 250 rows: a job row has about 35 columns, so a chunk stays under SQLite's 32,766 bound variables.
  await insertChunked(rows, (chunk) => db.insertInto('jobs').values(chunk).execute(), 250);
}

export function findBatch(db: DbOrTx, accountId: string, id: string): Promise<BatchRow | undefined> {
  return db
    .selectFrom('batches')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

export function findBatchById(db: DbOrTx, id: string): Promise<BatchRow | undefined> {
  return db.selectFrom('batches').selectAll().where('id', '=', id).executeTakeFirst();
}

export function listBatches(
  db: DbOrTx,
  accountId: string,
  page: { limit: number; offset: number },
): Promise<BatchRow[]> {
  return db
    .selectFrom('batches')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('seq', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

export async function countBatches(db: DbOrTx, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('batches')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Item states as a batch shows them: a cancelled item is a failed job with BATCH_CANCELLED. */
export type ItemStatus = 'pending' | 'processing' | 'completed' | 'failed' | 'cancelled';
export const CANCELLED_CODE = 'BATCH_CANCELLED';

/** The jobs-table condition of an item status. */
function itemStatusIs(status: ItemStatus) {
  return (eb: ExpressionBuilder<Database, 'jobs'>) => {
    if (status === 'cancelled') return eb.and([eb('status', '=', 'failed'), eb('error_code', '=', CANCELLED_CODE)]);
    if (status === 'failed')
      return eb.and([
        eb('status', '=', 'failed'),
        eb.or([eb('error_code', 'is', null), eb('error_code', '!=', CANCELLED_CODE)]),
      ]);
    return eb('status', '=', status);
  };
}

export function listItems(
  db: DbOrTx,
  batchId: string,
  filter: { status?: ItemStatus; limit: number; offset: number },
): Promise<JobRow[]> {
  return db
    .selectFrom('jobs')
    .selectAll()
    .where('batch_id', '=', batchId)
    .$if(filter.status !== undefined, (q) => q.where(itemStatusIs(filter.status!)))
    .orderBy('batch_index')
    .limit(filter.limit)
    .offset(filter.offset)
    .execute();
}

export async function countItems(db: DbOrTx, batchId: string, status?: ItemStatus): Promise<number> {
  const row = await db
    .selectFrom('jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('batch_id', '=', batchId)
    .$if(status !== undefined, (q) => q.where(itemStatusIs(status!)))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Items rendering now (the answer's `processing` count; the rest of the unsettled are pending). */
export function countProcessing(db: DbOrTx, batchId: string): Promise<number> {
  return countItems(db, batchId, 'processing');
}

/** The completed items in order, their stored files: what a zip or merged PDF is built from. */
export function completedItemFiles(
  db: DbOrTx,
  batchId: string,
  after: number,
  limit: number,
): Promise<Pick<JobRow, 'batch_index' | 'result_file_id' | 'result_filename'>[]> {
  return db
    .selectFrom('jobs')
    .select(['batch_index', 'result_file_id', 'result_filename'])
    .where('batch_id', '=', batchId)
    .where('status', '=', 'completed')
    .where('batch_index', '>', after)
    .orderBy('batch_index')
    .limit(limit)
    .execute();
}

/** The first item's id: the batch's own webhooks hang on it (a delivery belongs to a job row). */
export async function anchorJobId(db: DbOrTx, batchId: string): Promise<string> {
  const row = await db
    .selectFrom('jobs')
    .select('id')
    .where('batch_id', '=', batchId)
    .orderBy('batch_index')
    .limit(1)
    .executeTakeFirstOrThrow();
  return row.id;
}

/** Counts `n` items as settled with `outcome`, and returns the batch as it is now. */
export async function settleItems(
  db: DbOrTx,
  batchId: string,
  outcome: 'completed' | 'failed' | 'cancelled',
  n: number,
  now: number,
): Promise<BatchRow> {
  const column = sql.ref(outcome);
  await sql`update batches set settled = settled + ${n}, ${column} = ${column} + ${n}, updated_at = ${now},
              status = case when status = 'pending' then 'processing' else status end,
              started_at = coalesce(started_at, ${now})
            where id = ${batchId}`.execute(db);
  return (await findBatchById(db, batchId))!;
}

/** Moves a batch on (an end, or assembling), if it is still where `from` says. */
export async function moveBatch(
  db: DbOrTx,
  id: string,
  from: BatchStatus[],
  values: Updateable<BatchesTable>,
): Promise<boolean> {
  const result = await db
    .updateTable('batches')
    .set(values)
    .where('id', '=', id)
    .where('status', 'in', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Cancels the items not started yet; returns their reservations to void. */
export async function cancelPendingItems(
  db: DbOrTx,
  batchId: string,
  now: number,
): Promise<Pick<JobRow, 'id' | 'transaction_ref' | 'account_id'>[]> {
  return db
    .updateTable('jobs')
    .set({
      status: 'failed',
      error_code: CANCELLED_CODE,
      error_message: 'Cancelled before it started: the batch was cancelled.',
      completed_at: now,
      updated_at: now,
    })
    .where('batch_id', '=', batchId)
    .where('status', '=', 'pending')
    .returning(['id', 'transaction_ref', 'account_id'])
    .execute();
}

/** Claims batches due for assembly: assembling and unleased, or whose lease ran out. */
export function claimAssemblies(database: DatabaseHandle, c: ClaimRequest): Promise<BatchRow[]> {
  return claimRows<BatchRow>(database, {
    table: 'batches',
    key: 'seq',
    selectDue: sql`select seq from batches where status = 'assembling' and (locked_until is null or locked_until < ${c.now}) order by updated_at limit ${c.limit}`,
    markClaimed: sql`locked_by = ${c.workerId}, locked_until = ${c.now + c.leaseMs}, attempts = attempts + 1, updated_at = ${c.now}`,
  });
}

/** Extends an assembly's lease while it is built. */
export async function renewAssembly(db: DbOrTx, id: string, workerId: string, until: number): Promise<void> {
  await db
    .updateTable('batches')
    .set({ locked_until: until })
    .where('id', '=', id)
    .where('locked_by', '=', workerId)
    .execute();
}

/** Ends an assembly this worker still holds. */
export async function finishAssembly(
  db: DbOrTx,
  id: string,
  workerId: string,
  values: Updateable<BatchesTable>,
): Promise<boolean> {
  const result = await db
    .updateTable('batches')
    .set({ ...values, locked_by: null, locked_until: null })
    .where('id', '=', id)
    .where('locked_by', '=', workerId)
    .where('status', '=', 'assembling')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
