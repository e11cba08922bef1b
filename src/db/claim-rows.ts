/**
 * The claim step of a queue whose rows are the queue (jobs, webhook deliveries): pick the due rows and
 * mark them claimed (a lease) in one step, so two claimers never take the same row. The queue's store
 * writes the two halves; this file only joins them the way each dialect keeps claimers apart:
 * - PostgreSQL: one statement, the pick `FOR UPDATE SKIP LOCKED` in a CTE, so concurrent claimers take
 *   different rows without waiting on each other; the CTE (not `IN (subquery)`) makes the planner run
 *   the pick exactly once.
 * - SQLite: `update … where key in (pick)` inside a BEGIN IMMEDIATE transaction (database.ts), which
 *   holds the one write lock for the whole pick-and-update, across processes too.
 * A pick that ranks rows fairly across accounts joins a ranking (a window function) to the queue
 * table; PostgreSQL refuses `FOR UPDATE` over a window function, so such a pick names the alias of
 * the queue table to lock (`lockAlias`), and repeats the due condition on it, so a row another
 * claimer took meanwhile is re-checked and dropped after the lock.
 */
import { sql, type RawBuilder } from 'kysely';
import { withTransaction, type DatabaseHandle } from './database.js';
import type { Database } from './schema.js';

/** Claim input: who claims, how many rows at most, the time now, and how long the lease lasts. */
export interface ClaimRequest {
  workerId: string;
  limit: number;
  now: number;
  leaseMs: number;
}

/** One queue's claim, as its store writes it. */
export interface ClaimStatement {
  /** The queue table. */
  table: keyof Database;
  /** The column that `selectDue` returns and the update matches rows on. */
  key: string;
  /** `select <key> from <table> where … order by … limit …`: the due rows, in claim order, without a locking clause. */
  selectDue: RawBuilder<unknown>;
  /** The `set` list that marks a picked row claimed (lease holder, lease end, attempt count). */
  markClaimed: RawBuilder<unknown>;
  /** When `selectDue` joins other relations: the alias of the queue table in it, the only one locked. */
  lockAlias?: string;
}

/** Claims the rows `selectDue` picks, sets `markClaimed` on them and returns them as they are now. */
export async function claimRows<Row>(database: DatabaseHandle, claim: ClaimStatement): Promise<Row[]> {
  const table = sql.table(claim.table);
  if (database.dialect === 'postgres') {
    const result = await sql<Row>`
      with next as (${claim.selectDue} for update${claim.lockAlias ? sql` of ${sql.id(claim.lockAlias)}` : sql``} skip locked)
      update ${table} set ${claim.markClaimed}
        from next
       where ${sql.ref(`${claim.table}.${claim.key}`)} = ${sql.ref(`next.${claim.key}`)}
      returning ${table}.*`.execute(database.db);
    return result.rows;
  }
  return withTransaction(database.db, async (trx) => {
    const result = await sql<Row>`
      update ${table} set ${claim.markClaimed}
       where ${sql.ref(claim.key)} in (${claim.selectDue})
      returning *`.execute(trx);
    return result.rows;
  });
}
