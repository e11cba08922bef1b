/** SQL for the credits ledger. Every balance change goes with a transaction row, in one database transaction. */
import { sql } from 'kysely';
import type { DbOrTx } from '../db/database.js';
import type { NewTransaction, TransactionRow } from '../db/schema.js';

/**
 * Takes `amount` credits if the balance covers them. The conditional UPDATE is the lock: on PostgreSQL
 * concurrent debits queue on the row and re-check `credits >= amount`; on SQLite the write lock serialises them.
 * Returns the new balance, or undefined when the balance was too low.
 */
export async function takeCredits(db: DbOrTx, accountId: string, amount: number): Promise<number | undefined> {
  const row = await db
    .updateTable('accounts')
    .set((eb) => ({ credits: eb('credits', '-', amount) }))
    .where('id', '=', accountId)
    .where('credits', '>=', amount)
    .returning('credits')
    .executeTakeFirst();
  return row?.credits;
}

/** Adds credits and returns the new balance (undefined when the account does not exist). */
export async function addCredits(db: DbOrTx, accountId: string, amount: number): Promise<number | undefined> {
  const row = await db
    .updateTable('accounts')
    .set((eb) => ({ credits: eb('credits', '+', amount) }))
    .where('id', '=', accountId)
    .returning('credits')
    .executeTakeFirst();
  return row?.credits;
}

/**
 * Adds credits unless the balance would pass `maxBalance`, and returns the new balance; undefined when
 * the account does not exist or the balance is too high (the caller tells which).
 */
export async function addCreditsUpTo(
  db: DbOrTx,
  accountId: string,
  amount: number,
  maxBalance: number,
): Promise<number | undefined> {
  const row = await db
    .updateTable('accounts')
    .set((eb) => ({ credits: eb('credits', '+', amount) }))
    .where('id', '=', accountId)
    .where('credits', '<=', maxBalance - amount)
    .returning('credits')
    .executeTakeFirst();
  return row?.credits;
}

export async function insertTransaction(db: DbOrTx, row: NewTransaction): Promise<void> {
  await db.insertInto('credit_transactions').values(row).execute();
}

/** Rows per multi-row insert of a narrow table: well under SQLite's 32,766 bound variables. */
export const INSERT_CHUNK_ROWS = 500;

/** Inserts many rows of one table in chunks (a batch's PDFGENs, reservations and items). */
export async function insertChunked<T>(
  rows: readonly T[],
  insert: (chunk: T[]) => Promise<unknown>,
  chunkRows = INSERT_CHUNK_ROWS,
): Promise<void> {
  for (let i = 0; i < rows.length; i += chunkRows) await insert(rows.slice(i, i + chunkRows));
}

/** Inserts transactions in chunks. */
export async function insertTransactions(db: DbOrTx, rows: NewTransaction[]): Promise<void> {
  await insertChunked(rows, (chunk) => db.insertInto('credit_transactions').values(chunk).execute());
}

/** Inserts a REFUND unless one already reverses `row.refund_of`; returns whether it was inserted. */
export async function insertRefundOnce(db: DbOrTx, row: NewTransaction): Promise<boolean> {
  const result = await db
    .insertInto('credit_transactions')
    .values(row)
    .onConflict((oc) => oc.column('refund_of').doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** Inserts REFUNDs, skipping those whose PDFGEN is already refunded; returns how many were inserted. */
export async function insertRefundsOnce(db: DbOrTx, rows: NewTransaction[]): Promise<number> {
  let inserted = 0;
  await insertChunked(rows, async (chunk) => {
    const done = await db
      .insertInto('credit_transactions')
      .values(chunk)
      .onConflict((oc) => oc.column('refund_of').doNothing())
      .returning('transaction_ref')
      .execute();
    inserted += done.length;
  });
  return inserted;
}

/** The job and batch each of `refs` (PDFGENs) names, for the REFUNDs that give them back. */
export async function jobsOfTransactions(
  db: DbOrTx,
  refs: readonly string[],
): Promise<Map<string, { job_id: string | null; batch_id: string | null }>> {
  const found = new Map<string, { job_id: string | null; batch_id: string | null }>();
  await insertChunked(refs, async (chunk) => {
    const rows = await db
      .selectFrom('credit_transactions')
      .select(['transaction_ref', 'job_id', 'batch_id'])
      .where('transaction_ref', 'in', chunk)
      .execute();
    for (const row of rows) found.set(row.transaction_ref, { job_id: row.job_id, batch_id: row.batch_id });
  });
  return found;
}

export async function findTransaction(db: DbOrTx, transactionRef: string): Promise<TransactionRow | undefined> {
  return db
    .selectFrom('credit_transactions')
    .selectAll()
    .where('transaction_ref', '=', transactionRef)
    .executeTakeFirst();
}

export async function setExecTime(db: DbOrTx, transactionRef: string, execTm: number): Promise<void> {
  await db
    .updateTable('credit_transactions')
    .set({ exec_tm: execTm })
    .where('transaction_ref', '=', transactionRef)
    .execute();
}

/** Which transactions a listing shows: of one type, and/or those of one batch's items. */
export interface TransactionFilter {
  type?: TransactionRow['transaction_type'];
  batchId?: string;
}

/**
 * A transaction with what it refers to: for a REFUND, the PDFGEN it gives back (`refund_of`, and that
 * PDFGEN's template or tool); the job and batch are the row's own (`job_id`, `batch_id`, written when it
 * was charged or refunded, so they outlive the job row).
 */
export type ListedTransaction = TransactionRow & { refunded_template_id: string | null; refunded_tool: string | null };

function filtered(db: DbOrTx, accountId: string, filter: TransactionFilter) {
  let query = db.selectFrom('credit_transactions as t').where('t.account_id', '=', accountId);
  if (filter.type) query = query.where('t.transaction_type', '=', filter.type);
  // By the (account_id, batch_id) index: the account's own rows only, so another account's batch id matches nothing.
  if (filter.batchId) query = query.where('t.batch_id', '=', filter.batchId);
  return query;
}

export async function listTransactions(
  db: DbOrTx,
  accountId: string,
  page: { limit: number; offset: number },
  filter: TransactionFilter = {},
): Promise<ListedTransaction[]> {
  return filtered(db, accountId, filter)
    .leftJoin('credit_transactions as g', 'g.transaction_ref', 't.refund_of')
    .selectAll('t')
    .select(['g.template_id as refunded_template_id', 'g.tool as refunded_tool'])
    .orderBy('t.seq', 'desc')
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

export async function countTransactions(
  db: DbOrTx,
  accountId: string,
  filter: TransactionFilter = {},
): Promise<number> {
  const row = await filtered(db, accountId, filter)
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

/** Σ credits of the account's transactions: the invariant is balance = −Σ. */
export async function sumTransactionCredits(db: DbOrTx, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('credit_transactions')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('credits'), eb.lit(0)).as('total'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

export async function readBalance(db: DbOrTx, accountId: string): Promise<number | undefined> {
  const row = await db.selectFrom('accounts').select('credits').where('id', '=', accountId).executeTakeFirst();
  return row?.credits;
}
