/**
 * SQL for webhook deliveries. Each row is one notification and its own retry queue:
 *
 *   pending ──claim (lease)──▶ attempt ──2xx──▶ delivered
 *      ▲                          │
 *      └──── next_attempt_at ◀────┴──failure──▶ (last attempt) failed
 *
 * The row is written in the transaction that finishes its job, so "job done but nobody told" cannot
 * happen; a lease keeps two delivery loops from sending the same attempt; a crash mid-send leaves the
 * lease to run out and the attempt is made again (receivers de-duplicate on `webhook-id`).
 */
import { sql } from 'kysely';
import { claimRows, type ClaimRequest } from '../db/claim-rows.js';
import type { DatabaseHandle, DbOrTx } from '../db/database.js';
import type { WebhookDeliveriesTable, WebhookDeliveryRow } from '../db/schema.js';

/** Inserts the delivery unless this job already has one for the event; returns whether it did. */
export async function insertDelivery(db: DbOrTx, row: WebhookDeliveriesTable): Promise<boolean> {
  const result = await db
    .insertInto('webhook_deliveries')
    .values(row)
    .onConflict((oc) => oc.columns(['job_id', 'event']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
}

/** A claim of deliveries: the usual claim input, and how many of one account's may be in flight. */
export interface DeliveryClaimRequest extends ClaimRequest {
  /** Deliveries of one account in flight at once (live leases, every process together). */
  accountLimit: number;
}

/**
 * Claims up to `limit` due deliveries (pending, time come, no live lease) and counts the attempt. Fair
 * across accounts (the job's account; deliveries do not store it): round robin as in `claimJobs`, and
 * an account that already has `accountLimit` deliveries in flight (live leases, any process) gets no
 * more until some end, so a receiver that never answers holds up only its own account's webhooks.
 * On PostgreSQL two claimers at the same moment may each give an account its remaining share, so the
 * cap can be exceeded by the number of concurrent claimers for a moment; SQLite's claims are serial.
 * db/claim-rows.ts keeps two claimers apart per dialect.
 */
export function claimDeliveries(database: DatabaseHandle, c: DeliveryClaimRequest): Promise<WebhookDeliveryRow[]> {
  const due = (
    alias: string,
  ) => sql`${sql.ref(`${alias}.state`)} = 'pending' and ${sql.ref(`${alias}.next_attempt_at`)} <= ${c.now}
         and (${sql.ref(`${alias}.locked_until`)} is null or ${sql.ref(`${alias}.locked_until`)} < ${c.now})`;
  return claimRows<WebhookDeliveryRow>(database, {
    table: 'webhook_deliveries',
    key: 'id',
    lockAlias: 'w',
    selectDue: sql`
      with in_flight as (
        select j.account_id, count(*) as n from webhook_deliveries f join jobs j on j.id = f.job_id
        where f.state = 'pending' and f.locked_until >= ${c.now}
        group by j.account_id
      ), ranked as (
        select d.id, j.account_id, row_number() over (partition by j.account_id order by d.next_attempt_at, d.id) as account_rank
        from webhook_deliveries d join jobs j on j.id = d.job_id
        where ${due('d')}
      )
      select w.id from webhook_deliveries w
        join ranked r on r.id = w.id
        left join in_flight a on a.account_id = r.account_id
      where ${due('w')} and r.account_rank + coalesce(a.n, 0) <= ${c.accountLimit}
      order by r.account_rank + coalesce(a.n, 0), w.next_attempt_at, w.id
      limit ${c.limit}`,
    markClaimed: sql`locked_by = ${c.workerId}, locked_until = ${c.now + c.leaseMs}, attempts = attempts + 1, updated_at = ${c.now}`,
  });
}

/** The outcome of one attempt, written only while the attempt's lease is held. */
export interface AttemptOutcome {
  state: 'pending' | 'delivered' | 'failed';
  status: number | null;
  error: string | null;
  nextAttemptAt: number;
}

/** Records one attempt's outcome and frees the lease; false when the lease was no longer ours. */
export async function recordAttempt(
  db: DbOrTx,
  id: string,
  workerId: string,
  outcome: AttemptOutcome,
  now: number,
): Promise<boolean> {
  const updated = await db
    .updateTable('webhook_deliveries')
    .set({
      state: outcome.state,
      last_status: outcome.status,
      last_error: outcome.error,
      next_attempt_at: outcome.nextAttemptAt,
      delivered_at: outcome.state === 'delivered' ? now : null,
      locked_by: null,
      locked_until: null,
      updated_at: now,
    })
    .where('id', '=', id)
    .where('locked_by', '=', workerId)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/** Shutdown: frees this loop's leases so another process can send at once (the attempt is not counted). */
export async function releaseDeliveries(db: DbOrTx, workerId: string, now: number): Promise<number> {
  const updated = await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({ locked_by: null, locked_until: null, attempts: eb('attempts', '-', 1), updated_at: now }))
    .where('locked_by', '=', workerId)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  return Number(updated.numUpdatedRows);
}

/** Deliveries still to be made (pending, due or waiting for a retry), for /metrics. */
export async function countPendingDeliveries(db: DbOrTx): Promise<number> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .where('state', '=', 'pending')
    .executeTakeFirstOrThrow();
  return Number(row.total);
}
