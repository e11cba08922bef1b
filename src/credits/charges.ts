/**
 * Charging for documents: the one home of the rule "a credit is charged only for a delivered
 * document, exactly once, across crashes and retries". Every generation — synchronous or a job —
 * goes through it; nothing else debits or refunds a PDFGEN.
 *
 * A charge is a two-phase transfer (as TigerBeetle's pending transfers):
 *   reserve → PDFGEN (+1, the balance drops at once so concurrent requests cannot overspend) and a
 *             pending reservation, in one database transaction;
 *   post    → the document was delivered: the reservation is resolved, the PDFGEN stays;
 *   void    → the generation failed: the reservation is resolved and exactly one REFUND (−1) written.
 * Post and void both start by deleting the reservation row, so a reservation resolves exactly once,
 * whichever of them (or the recovery below) comes first.
 *
 * Holders: a synchronous request's reservation is held by its process under a lease (`leaseMs`),
 * renewed by `renewHeld()` while the request runs. If the process dies, nobody renews it: once the
 * lease has run out, `recoverExpired()` in any process (at start-up, then every third of a lease)
 * voids it. A job's reservation has no lease: the job row is its lease, and the job's completion or
 * failure posts or voids it (src/jobs/).
 */
import type { Db, Tx } from '../db/database.js';
import { withTransaction } from '../db/database.js';
import { isAppError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import type { ChargeSubject, CreditLedger, JobsCharge } from './ledger.js';
import * as store from './reservations-store.js';

/** A reserved credit. */
export interface Reservation {
  transactionRef: string;
  accountId: string;
  /** Balance after the debit. */
  balance: number;
}

/** Who resolves a reservation: this process (a synchronous request, leased) or a job. */
export type ReservationHolder = { request: true } | { jobId: string; batchId?: string | null };

/** Charging for documents (see the file comment). */
export interface Charges {
  /**
   * Debits one credit and records it as pending. INSUFFICIENT_CREDITS at zero. Pass `trx` to join a
   * caller's transaction. `subject`: the template, or the tool of work without one (the PDF tools).
   */
  reserve(accountId: string, subject: ChargeSubject, holder: ReservationHolder, trx?: Tx): Promise<Reservation>;
  /**
   * A batch's reservation (issue 40): one credit per job in `jobIds`, all or none (INSUFFICIENT_CREDITS),
   * in the caller's transaction; each job posts or voids its own, as a create-async job does.
   */
  reserveForJobs(
    accountId: string,
    charge: JobsCharge,
    trx: Tx,
  ): Promise<{ transactionRefs: string[]; balance: number }>;
  /** The document was delivered: the charge is final. False when it had already been voided (then no charge stands). */
  post(reservation: Pick<Reservation, 'transactionRef'>, execMs: number, trx?: Tx): Promise<boolean>;
  /** The generation failed: refunds it unless it was posted, exactly once. False when already resolved. */
  void(reservation: Pick<Reservation, 'transactionRef' | 'accountId'>, trx?: Tx): Promise<boolean>;
  /** As `void`, for many reservations in the caller's transaction in a few statements (a batch's chunk); returns how many were refunded. */
  voidMany(reservations: readonly Pick<Reservation, 'transactionRef' | 'accountId'>[], trx: Tx): Promise<number>;
  /** Extends the leases of this process's reservations still in progress (called every third of a lease). */
  renewHeld(now?: number): Promise<void>;
  /** Voids reservations whose lease ran out (their process died); returns how many. */
  recoverExpired(now?: number): Promise<number>;
  /** Unresolved reservations (one account, or all): /metrics and tests. */
  pendingCount(accountId?: string): Promise<number>;
}

export interface ChargesOptions {
  db: Db;
  ledger: CreditLedger;
  /** This process, as recorded on its reservations (`host:pid:random`). */
  instanceId: string;
  /** How long a synchronous reservation stays valid without renewal. */
  leaseMs: number;
  logger: Logger;
}

/**
 * Waits between void attempts outside a transaction. A generation that fails because the database
 * went away cannot refund at once either; after these, the reservation is left to expire and be
 * voided by recovery (issue 7's PostgreSQL drill, issue 12).
 */
const VOID_RETRY_DELAYS_MS = [250, 500, 1000, 2000, 4000];
const RECOVERY_BATCH = 100;

export function createCharges(options: ChargesOptions): Charges {
  const { db, ledger, instanceId, leaseMs, logger } = options;
  /** Reservations this process holds and still works on: only these are renewed. */
  const held = new Set<string>();
  const inTx = <T>(trx: Tx | undefined, work: (t: Tx) => Promise<T>): Promise<T> =>
    trx ? work(trx) : withTransaction(db, work);

  async function voidOnce(reservation: Pick<Reservation, 'transactionRef' | 'accountId'>, t: Tx): Promise<boolean> {
    if (!(await store.resolveReservation(t, reservation.transactionRef))) return false;
    await ledger.refund(reservation.accountId, reservation.transactionRef, t);
    return true;
  }

  const charges: Charges = {
    reserve(accountId, subject, holder, trx) {
      return inTx(trx, async (t) => {
        const isRequest = 'request' in holder;
        const debit = await ledger.debit(
          accountId,
          isRequest ? subject : { subject, jobId: holder.jobId, batchId: holder.batchId ?? null },
          t,
        );
        const now = Date.now();
        await store.insertReservation(t, {
          transaction_ref: debit.transactionRef,
          account_id: accountId,
          holder: isRequest ? instanceId : `job:${holder.jobId}`,
          lease_until: isRequest ? now + leaseMs : null,
          created_at: now,
        });
        if (isRequest) held.add(debit.transactionRef);
        return { transactionRef: debit.transactionRef, accountId, balance: debit.balance };
      });
    },

    async reserveForJobs(accountId, charge, trx) {
      const { jobIds } = charge;
      const debit = await ledger.debitMany(accountId, charge, trx);
      const now = Date.now();
      await store.insertReservations(
        trx,
        debit.transactionRefs.map((ref, i) => ({
          transaction_ref: ref,
          account_id: accountId,
          holder: `job:${jobIds[i]}`,
          lease_until: null,
          created_at: now,
        })),
      );
      return debit;
    },

    async post(reservation, execMs, trx) {
      const posted = await inTx(trx, async (t) => {
        if (!(await store.resolveReservation(t, reservation.transactionRef))) return false;
        await ledger.recordExecTime(reservation.transactionRef, execMs, t);
        return true;
      });
      held.delete(reservation.transactionRef);
      // Only when this process stalled past its lease and another one voided the charge meanwhile.
      if (!posted)
        logger.warn(
          { transactionRef: reservation.transactionRef },
          'a delivered document had already been refunded (its lease ran out); no charge stands',
        );
      return posted;
    },

    async void(reservation, trx) {
      if (trx) {
        const voided = await voidOnce(reservation, trx);
        held.delete(reservation.transactionRef);
        return voided;
      }
      try {
        for (const delayMs of [...VOID_RETRY_DELAYS_MS, undefined]) {
          try {
            return await withTransaction(db, (t) => voidOnce(reservation, t));
          } catch (error) {
            // A coded error (unknown account…) will not change on retry; only infrastructure failures do.
            if (delayMs === undefined || isAppError(error)) throw error;
            logger.warn(
              { err: error, transactionRef: reservation.transactionRef, retryInMs: delayMs },
              'refund failed; retrying',
            );
            await new Promise((resolve) => setTimeout(resolve, delayMs));
          }
        }
        return false;
      } catch (error) {
        // Not renewed from now on: once its lease has run out, recovery (here or in another process) voids it.
        logger.error(
          { err: error, transactionRef: reservation.transactionRef },
          'refund failed; the reservation will be voided when its lease runs out',
        );
        return false;
      } finally {
        held.delete(reservation.transactionRef);
      }
    },

    async voidMany(reservations, trx) {
      const resolved = new Set(
        await store.resolveReservations(
          trx,
          reservations.map((r) => r.transactionRef),
        ),
      );
      const byAccount = new Map<string, string[]>();
      for (const r of reservations) {
        held.delete(r.transactionRef);
        if (resolved.has(r.transactionRef))
          byAccount.set(r.accountId, [...(byAccount.get(r.accountId) ?? []), r.transactionRef]);
      }
      let voided = 0;
      for (const [accountId, refs] of byAccount) voided += await ledger.refundMany(accountId, refs, trx);
      return voided;
    },

    async renewHeld(now = Date.now()) {
      await store.renewReservations(db, [...held], now + leaseMs);
    },

    async recoverExpired(now = Date.now()) {
      let voided = 0;
      for (;;) {
        const expired = await store.findExpiredReservations(db, now, RECOVERY_BATCH);
        const before = voided;
        for (const row of expired) {
          if (held.has(row.transaction_ref)) continue; // ours, only late in renewing
          if (
            await withTransaction(db, (t) =>
              voidOnce({ transactionRef: row.transaction_ref, accountId: row.account_id }, t),
            )
          ) {
            voided += 1;
            logger.warn(
              { transactionRef: row.transaction_ref, accountId: row.account_id, holder: row.holder },
              'voided a reservation whose process stopped renewing it; credit refunded',
            );
          }
        }
        if (expired.length < RECOVERY_BATCH || voided === before) return voided;
      }
    },

    pendingCount(accountId) {
      return store.countReservations(db, accountId);
    },
  };
  return charges;
}
