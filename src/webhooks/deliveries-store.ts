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

/**
 * Claims up to `limit` due deliveries (pending, time come, no live lease), oldest first, and counts the
 * attempt. db/claim-rows.ts keeps two claimers apart per dialect.
 */
export function claimDeliveries(database: DatabaseHandle, c: ClaimRequest): Promise<WebhookDeliveryRow[]> {
  return claimRows<WebhookDeliveryRow>(database, {
    table: 'webhook_deliveries',
    key: 'id',
    selectDue: sql`
      select id from webhook_deliveries
      where state = 'pending' and next_attempt_at <= ${c.now} and (locked_until is null or locked_until < ${c.now})
      order by next_attempt_at
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
export async function recordAttempt(db: DbOrTx, id: string, workerId: string, outcome: AttemptOutcome, now: number): Promise<boolean> {
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
