/**
 * Settling a batch's items a chunk at a time (issue 49), off the request that asked for it: the batch
 * row in `cancelling` (or an `intake` whose process died) is the queue, claimed under a lease like an
 * assembly. Each chunk is one short transaction that changes up to BATCH_CHUNK_ITEMS items and voids
 * their reservations (one REFUND each, credits/charges.ts), so a refund happens exactly once whichever
 * process, and however many crashes, it takes; the event loop and the database's writer are free
 * between two chunks.
 * - cancelling: unstarted items become cancelled and are counted on the batch; once none is left the
 *   batch goes back to `processing` (items rendering finish, and the last one ends it cancelled).
 * - intake: the items of a batch that was never accepted are refunded and deleted, then the batch row.
 */
import type { Charges } from '../credits/charges.js';
import type { DatabaseHandle, Tx } from '../db/database.js';
import { withTransaction } from '../db/database.js';
import type { BatchRow } from '../db/schema.js';
import type { JobWakeups } from '../jobs/job-wakeups.js';
import type { Logger } from '../shared/log.js';
import type { WebhookQueue } from '../webhooks/webhook-queue.js';
import { BATCH_CHUNK_ITEMS } from './batch-bounds.js';
import { createClaimLoop, type ClaimLoop } from '../shared/claim-loop.js';
import { conclude } from './batch-ends.js';
import * as store from './batches-store.js';

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** What settling needs. */
export interface SettlingDeps {
  database: DatabaseHandle;
  charges: Charges;
  webhooks: WebhookQueue;
  /** This process, as the holder of a lease. */
  holder: string;
  leaseMs: number;
}

async function voidAll(trx: Tx, charges: Charges, items: store.ItemReservation[]): Promise<void> {
  await charges.voidMany(
    items.map((item) => ({ transactionRef: item.transaction_ref, accountId: item.account_id })),
    trx,
  );
}

/** Where a cancel has got to: the last row it cancelled (an item retried behind it is found by one more pass from the start). */
interface Cursor {
  after: number;
}

/** One chunk of a cancel; false once no unstarted item is left (the batch then runs on as `processing`). */
async function cancelChunk(trx: Tx, deps: SettlingDeps, batchId: string, cursor: Cursor): Promise<boolean> {
  const now = Date.now();
  const stopped = await store.cancelPendingItems(trx, batchId, { after: cursor.after, limit: BATCH_CHUNK_ITEMS, now });
  if (stopped.length === 0) {
    if (cursor.after >= 0) {
      cursor.after = -1;
      return true;
    }
    await store.moveBatch(trx, batchId, ['cancelling'], {
      status: 'processing',
      locked_by: null,
      locked_until: null,
      updated_at: now,
    });
    return false;
  }
  cursor.after = Math.max(...stopped.map((item) => Number(item.batch_index)));
  await voidAll(trx, deps.charges, stopped);
  const batch = await store.settleItems(trx, batchId, 'cancelled', stopped.length, now);
  if (batch.settled >= batch.total) {
    await conclude(trx, deps.webhooks, batch, now);
    return false;
  }
  return true;
}

/** One chunk of a discard; false once the batch is gone. */
async function discardChunk(trx: Tx, deps: SettlingDeps, batchId: string): Promise<boolean> {
  const items = await store.intakeItems(trx, batchId, BATCH_CHUNK_ITEMS);
  if (items.length === 0) {
    await store.deleteIntakeBatch(trx, batchId);
    return false;
  }
  await voidAll(trx, deps.charges, items);
  await store.deleteItems(
    trx,
    items.map((item) => item.id),
  );
  return true;
}

/**
 * Runs `chunk` in one transaction after another while this process still holds the batch in
 * `status`, with a turn of the event loop between two; the lease is renewed with each.
 */
async function inChunks(
  deps: SettlingDeps,
  batch: Pick<BatchRow, 'id' | 'status'>,
  chunk: (trx: Tx, deps: SettlingDeps, id: string, cursor: Cursor) => Promise<boolean>,
): Promise<void> {
  const cursor: Cursor = { after: -1 };
  for (let more = true; more; ) {
    more = await withTransaction(deps.database.db, async (trx) => {
      if (!(await store.renewBatchLease(trx, batch.id, deps.holder, Date.now() + deps.leaseMs, batch.status)))
        return false;
      return chunk(trx, deps, batch.id, cursor);
    });
    if (more) await turn();
  }
}

/** Refunds and deletes the items of a batch this process holds in intake, then the batch: a refusal or a failure while it was queued. */
export function discardIntake(deps: SettlingDeps, batchId: string): Promise<void> {
  return inChunks(deps, { id: batchId, status: 'intake' }, discardChunk);
}

/**
 * Cancels and refunds the unstarted items of a batch this process has just marked `cancelling` (under
 * its lease), in the background of the cancel's answer. Never throws: on a failure, or if this
 * process dies, the lease runs out and the settling loop of any worker takes over where it stopped.
 */
export function settleCancel(deps: SettlingDeps, batchId: string): Promise<void> {
  return inChunks(deps, { id: batchId, status: 'cancelling' }, cancelChunk).catch(() => undefined);
}

export interface BatchSettlerOptions extends SettlingDeps {
  wakeups: JobWakeups;
  pollIntervalMs: number;
  logger: Logger;
}

/** The loop that settles cancelled batches and abandoned intakes (started with the job workers). */
export function createBatchSettler(o: BatchSettlerOptions): ClaimLoop {
  const logger = o.logger.child({ component: 'batch-settling', workerId: o.holder });

  async function settle(batch: BatchRow): Promise<void> {
    try {
      await inChunks(o, batch, batch.status === 'intake' ? discardChunk : cancelChunk);
      logger.info(
        { batchId: batch.id, step: batch.status },
        batch.status === 'intake'
          ? 'an abandoned batch intake was refunded and removed'
          : "a cancelled batch's unstarted items were refunded",
      );
    } catch (error) {
      // Left under its lease: claimed again once it runs out, and the chunks go on where they stopped.
      logger.warn({ batchId: batch.id, err: error }, 'could not settle the batch; will retry');
    }
    o.wakeups.announce();
    o.webhooks.announce();
  }

  return createClaimLoop({
    what: 'batch settlements',
    slots: 1,
    claim: () =>
      store.claimSettlements(o.database, { workerId: o.holder, limit: 1, now: Date.now(), leaseMs: o.leaseMs }),
    run: settle,
    wakeups: o.wakeups,
    pollIntervalMs: o.pollIntervalMs,
    logger,
  });
}
