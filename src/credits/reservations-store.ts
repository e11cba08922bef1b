/** SQL for credit reservations (see charges.ts): one row per PDFGEN not yet posted or voided. */
import type { DbOrTx } from '../db/database.js';
import type { CreditReservationsTable } from '../db/schema.js';
import { insertChunked } from './ledger-store.js';

export async function insertReservation(db: DbOrTx, row: CreditReservationsTable): Promise<void> {
  await db.insertInto('credit_reservations').values(row).execute();
}

/** Inserts many reservations (a batch's items) in chunks. */
export async function insertReservations(db: DbOrTx, rows: CreditReservationsTable[]): Promise<void> {
  await insertChunked(rows, (chunk) => db.insertInto('credit_reservations').values(chunk).execute());
}

/**
 * Resolves a reservation: deletes its row and says whether it was still there. Post and void both go
 * through this delete, so whichever comes first wins and the other does nothing.
 */
export async function resolveReservation(db: DbOrTx, transactionRef: string): Promise<boolean> {
  const result = await db
    .deleteFrom('credit_reservations')
    .where('transaction_ref', '=', transactionRef)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Resolves many reservations at once (a batch's chunk): deletes their rows and returns the refs that were still there. */
export async function resolveReservations(db: DbOrTx, transactionRefs: string[]): Promise<string[]> {
  if (transactionRefs.length === 0) return [];
  const rows = await db
    .deleteFrom('credit_reservations')
    .where('transaction_ref', 'in', transactionRefs)
    .returning('transaction_ref')
    .execute();
  return rows.map((row) => row.transaction_ref);
}

/** Extends the leases of the given reservations (those its process is still working on). */
export async function renewReservations(db: DbOrTx, transactionRefs: string[], leaseUntil: number): Promise<void> {
  if (transactionRefs.length === 0) return;
  await db
    .updateTable('credit_reservations')
    .set({ lease_until: leaseUntil })
    .where('transaction_ref', 'in', transactionRefs)
    .execute();
}

/** Reservations whose lease ran out before `now` (their process died or stalled), oldest first. */
export async function findExpiredReservations(
  db: DbOrTx,
  now: number,
  limit: number,
): Promise<{ transaction_ref: string; account_id: string; holder: string }[]> {
  return db
    .selectFrom('credit_reservations')
    .select(['transaction_ref', 'account_id', 'holder'])
    .where('lease_until', '<', now)
    .orderBy('lease_until')
    .limit(limit)
    .execute();
}

/** Pending reservations, for metrics and tests (one account, or all). */
export async function countReservations(db: DbOrTx, accountId?: string): Promise<number> {
  let query = db.selectFrom('credit_reservations').select((eb) => eb.fn.countAll<number>().as('total'));
  if (accountId !== undefined) query = query.where('account_id', '=', accountId);
  const row = await query.executeTakeFirstOrThrow();
  return Number(row.total);
}
