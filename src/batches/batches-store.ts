/**
 * SQL for batches (issue 40). A batch row and its items (job rows with `batch_id`):
 *
 *   intake ──items queued──▶ pending ──first item settles──▶ processing ──last item settles──▶ completed | completed_with_errors | failed | cancelled
 *     │ (refused, or its process died: items refunded and deleted)   │ (zip, merged)
 *     └──▶ (gone)            pending | processing ──cancel──▶ cancelling └──▶ assembling ──lease, build, store──▶ (the same ends)
 *                                                               │ (unstarted items cancelled and refunded, a chunk at a time)
 *                                                               └──▶ the last item settles ──▶ (the same ends)
 *
 * `settled` moves in the transaction that ends an item (job-worker.ts's hook) or cancels items, so
 * the item that makes it reach `total` is known to exactly one transaction, which moves the batch on.
 * `intake`, `cancelling` and `assembling` are worked on under a lease (`locked_by`, `locked_until`), so
 * a process that dies mid-way leaves the step to another; the items of an `intake` or `cancelling`
 * batch are not claimed by the job workers (jobs-store.ts).
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

/** The statuses of a batch whose items still run (an item's end may conclude it). */
export const RUNNING_STATUSES: BatchStatus[] = ['pending', 'processing', 'cancelling'];

/** A batch its owner can see: one still in intake is not accepted yet. */
export function findBatch(db: DbOrTx, accountId: string, id: string): Promise<BatchRow | undefined> {
  return db
    .selectFrom('batches')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('status', '!=', 'intake')
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
    .where('status', '!=', 'intake')
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
    .where('status', '!=', 'intake')
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

/** An item's reservation, to void when the item is cancelled or discarded. */
export type ItemReservation = Pick<JobRow, 'id' | 'transaction_ref' | 'account_id'>;

/**
 * Cancels up to `limit` items not started yet after row `after`, in row order (a cursor, so a chunk
 * never reads the rows earlier chunks cancelled); returns their reservations and rows to void. The
 * outer `status = 'pending'` is re-checked by PostgreSQL on a row a claim changed meanwhile.
 */
export async function cancelPendingItems(
  db: DbOrTx,
  batchId: string,
  c: { after: number; limit: number; now: number },
): Promise<(ItemReservation & Pick<JobRow, 'batch_index'>)[]> {
  return db
    .updateTable('jobs')
    .set({
      status: 'failed',
      error_code: CANCELLED_CODE,
      error_message: 'Cancelled before it started: the batch was cancelled.',
      completed_at: c.now,
      updated_at: c.now,
    })
    .where('batch_id', '=', batchId)
    .where('status', '=', 'pending')
    .where('seq', 'in', (eb) =>
      eb
        .selectFrom('jobs')
        .select('seq')
        .where('batch_id', '=', batchId)
        .where('batch_index', '>', c.after)
        .where('status', '=', 'pending')
        .orderBy('batch_index')
        .limit(c.limit),
    )
    .returning(['id', 'transaction_ref', 'account_id', 'batch_index'])
    .execute();
}

/** Up to `limit` items of a batch in intake (none has started: the workers do not claim them). */
export function intakeItems(db: DbOrTx, batchId: string, limit: number): Promise<ItemReservation[]> {
  return db
    .selectFrom('jobs')
    .select(['id', 'transaction_ref', 'account_id'])
    .where('batch_id', '=', batchId)
    .orderBy('batch_index')
    .limit(limit)
    .execute();
}

export async function deleteItems(db: DbOrTx, ids: string[]): Promise<void> {
  if (ids.length > 0) await db.deleteFrom('jobs').where('id', 'in', ids).execute();
}

/** Deletes a batch that was never accepted (its items are gone already). */
export async function deleteIntakeBatch(db: DbOrTx, id: string): Promise<void> {
  await db.deleteFrom('batches').where('id', '=', id).where('status', '=', 'intake').execute();
}

/** Extends the lease of a step (intake, cancelling, assembling) this process holds; false when it holds it no more. */
export async function renewBatchLease(
  db: DbOrTx,
  id: string,
  holder: string,
  until: number,
  status?: BatchStatus,
): Promise<boolean> {
  const result = await db
    .updateTable('batches')
    .set({ locked_until: until })
    .where('id', '=', id)
    .where('locked_by', '=', holder)
    .$if(status !== undefined, (q) => q.where('status', '=', status!))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Claims batches whose items are to be settled in chunks: cancelling and unleased (or whose lease ran
 * out), and intakes whose process died (the lease ran out): their items are refunded and removed.
 */
export function claimSettlements(database: DatabaseHandle, c: ClaimRequest): Promise<BatchRow[]> {
  return claimRows<BatchRow>(database, {
    table: 'batches',
    key: 'seq',
    selectDue: sql`select seq from batches
      where (status = 'cancelling' and (locked_until is null or locked_until < ${c.now})) or (status = 'intake' and locked_until < ${c.now})
      order by updated_at limit ${c.limit}`,
    markClaimed: sql`locked_by = ${c.workerId}, locked_until = ${c.now + c.leaseMs}, updated_at = ${c.now}`,
  });
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
