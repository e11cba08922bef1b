/**
 * The credits ledger. Invariants, on both databases and under concurrency:
 * - the balance never goes below zero (a CHECK constraint backs the conditional update);
 * - every change of the balance is one transaction row written in the same database transaction;
 * - balance = −(sum of transaction credits): PDFGEN +1 consumes, REFUND/PURCHASE/BONUS are negative;
 * - a PDFGEN is refunded at most once (unique `refund_of`);
 * - a grant never takes the balance past MAX_BALANCE (the conditional update is the check).
 */
import type { Db, DbOrTx, Tx } from '../db/database.js';
import { withTransaction } from '../db/database.js';
import { AppError } from '../shared/errors.js';
import { newTransactionRef } from '../shared/ids.js';
import type { TransactionRow } from '../db/schema.js';
import * as store from './ledger-store.js';

export type GrantType = 'PURCHASE' | 'BONUS';

/** The most credits one grant (or an account's initial credits) may add. */
export const MAX_GRANT_CREDITS = 1_000_000_000;
/**
 * The most credits an account may hold after a grant. `accounts.credits` is a 32-bit integer on
 * PostgreSQL (2^31 − 1 = 2,147,483,647) while SQLite would store more, so a bound below it keeps both
 * databases giving the same answer; the gap leaves room for refunds of debits in flight, which may
 * land after a grant filled the account up to the bound.
 */
export const MAX_BALANCE = 2_000_000_000;

export interface Debit {
  transactionRef: string;
  /** Balance after the debit. */
  balance: number;
}

/**
 * What a PDFGEN pays for: a template's generation (its id), or work without a template, named by the
 * tool that did it (`{ tool: 'merge' }`, a PDF tools run); null for neither.
 */
export type ChargeSubject = string | { tool: string } | null;

/** A background job's charge: what it pays for, and the job (and batch) the ledger row names for good. */
export interface JobCharge {
  subject: ChargeSubject;
  jobId: string;
  batchId: string | null;
}

/** A batch's charges: one PDFGEN per job, in `jobIds`' order. */
export interface JobsCharge {
  subject: ChargeSubject;
  jobIds: readonly string[];
  batchId: string | null;
}

const isJobCharge = (charge: ChargeSubject | JobCharge): charge is JobCharge =>
  charge !== null && typeof charge === 'object' && 'jobId' in charge;

/** The row's `template_id` and `tool` for a subject. */
function subjectColumns(subject: ChargeSubject): { template_id: string | null; tool: string | null } {
  return {
    template_id: typeof subject === 'string' ? subject : null,
    tool: subject !== null && typeof subject === 'object' ? subject.tool : null,
  };
}

export interface CreditLedger {
  /**
   * Takes one credit for a generation (PDFGEN +1). Throws INSUFFICIENT_CREDITS at zero. Pass `trx` to
   * join a caller's transaction. Generations charge through charges.ts, which calls this and `refund`.
   * `subject`: the template, or the PDF tool of a run without one (merge, extract, rotate).
   */
  debit(accountId: string, charge: ChargeSubject | JobCharge, trx?: Tx): Promise<Debit>;
  /** Takes a credit per job at once, one PDFGEN each (a batch); INSUFFICIENT_CREDITS unless all are there. */
  debitMany(accountId: string, charge: JobsCharge, trx: Tx): Promise<{ transactionRefs: string[]; balance: number }>;
  /** Reverses a PDFGEN exactly once (REFUND −1). Returns false when it was already refunded. */
  refund(accountId: string, pdfgenRef: string, trx?: Tx): Promise<boolean>;
  /** Reverses many PDFGENs of one account, each exactly once (a batch's chunk); returns how many were refunded. */
  refundMany(accountId: string, pdfgenRefs: readonly string[], trx: Tx): Promise<number>;
  /**
   * Adds credits (PURCHASE or BONUS, negative in the ledger) and returns the new balance. Throws
   * INVALID_REQUEST past MAX_GRANT_CREDITS, BALANCE_LIMIT_EXCEEDED when the balance would pass MAX_BALANCE.
   */
  grant(accountId: string, credits: number, type: GrantType, trx?: Tx): Promise<number>;
  /** Records how long the generation behind a PDFGEN took. */
  recordExecTime(transactionRef: string, execMs: number, trx?: Tx): Promise<void>;
  balance(accountId: string): Promise<number>;
  /** A page of the account's transactions, newest first, with what each refers to; `total` counts the ones the filter keeps. */
  list(
    accountId: string,
    page: { limit: number; offset: number },
    filter?: store.TransactionFilter,
  ): Promise<{ transactions: store.ListedTransaction[]; total: number }>;
}

export function createCreditLedger(db: Db): CreditLedger {
  const inTx = <T>(trx: Tx | undefined, work: (t: DbOrTx) => Promise<T>): Promise<T> =>
    trx ? work(trx) : withTransaction(db, work);

  return {
    debit(accountId, charge, trx) {
      const job = isJobCharge(charge) ? charge : null;
      const subject = job ? job.subject : (charge as ChargeSubject);
      return inTx(trx, async (t) => {
        const balance = await store.takeCredits(t, accountId, 1);
        if (balance === undefined) {
          throw new AppError(
            'INSUFFICIENT_CREDITS',
            'No credits remaining. Add credits to the account to generate documents.',
          );
        }
        const transactionRef = newTransactionRef();
        await store.insertTransaction(t, {
          transaction_ref: transactionRef,
          account_id: accountId,
          transaction_type: 'PDFGEN',
          ...subjectColumns(subject),
          job_id: job?.jobId ?? null,
          batch_id: job?.batchId ?? null,
          exec_tm: null,
          credits: 1,
          refund_of: null,
          created_at: Date.now(),
        });
        return { transactionRef, balance };
      });
    },

    async debitMany(accountId, charge, trx) {
      const count = charge.jobIds.length;
      const balance = await store.takeCredits(trx, accountId, count);
      if (balance === undefined) {
        throw new AppError(
          'INSUFFICIENT_CREDITS',
          `This batch needs ${count} credits and the account has fewer. Add credits, or send fewer items.`,
        );
      }
      const now = Date.now();
      const rows = charge.jobIds.map((jobId) => ({
        transaction_ref: newTransactionRef(),
        account_id: accountId,
        transaction_type: 'PDFGEN' as const,
        ...subjectColumns(charge.subject),
        job_id: jobId,
        batch_id: charge.batchId,
        exec_tm: null,
        credits: 1,
        refund_of: null,
        created_at: now,
      }));
      await store.insertTransactions(trx, rows);
      return { transactionRefs: rows.map((r) => r.transaction_ref), balance };
    },

    refund(accountId, pdfgenRef, trx) {
      return inTx(trx, async (t) => {
        const paid = (await store.jobsOfTransactions(t, [pdfgenRef])).get(pdfgenRef);
        const inserted = await store.insertRefundOnce(t, {
          transaction_ref: newTransactionRef(),
          account_id: accountId,
          transaction_type: 'REFUND',
          template_id: null,
          job_id: paid?.job_id ?? null,
          batch_id: paid?.batch_id ?? null,
          exec_tm: null,
          credits: -1,
          refund_of: pdfgenRef,
          created_at: Date.now(),
        });
        if (inserted) await store.addCredits(t, accountId, 1);
        return inserted;
      });
    },

    async refundMany(accountId, pdfgenRefs, trx) {
      const now = Date.now();
      const paid = await store.jobsOfTransactions(trx, pdfgenRefs);
      const inserted = await store.insertRefundsOnce(
        trx,
        pdfgenRefs.map((ref) => ({
          transaction_ref: newTransactionRef(),
          account_id: accountId,
          transaction_type: 'REFUND' as const,
          template_id: null,
          job_id: paid.get(ref)?.job_id ?? null,
          batch_id: paid.get(ref)?.batch_id ?? null,
          exec_tm: null,
          credits: -1,
          refund_of: ref,
          created_at: now,
        })),
      );
      if (inserted > 0) await store.addCredits(trx, accountId, inserted);
      return inserted;
    },

    grant(accountId, credits, type, trx) {
      if (!Number.isInteger(credits) || credits <= 0 || credits > MAX_GRANT_CREDITS) {
        return Promise.reject(
          new AppError('INVALID_REQUEST', `credits must be a whole number from 1 to ${MAX_GRANT_CREDITS}.`),
        );
      }
      return inTx(trx, async (t) => {
        const balance = await store.addCreditsUpTo(t, accountId, credits, MAX_BALANCE);
        if (balance === undefined) throw await grantRefusal(t, accountId, credits);
        await store.insertTransaction(t, {
          transaction_ref: newTransactionRef(),
          account_id: accountId,
          transaction_type: type,
          template_id: null,
          exec_tm: null,
          credits: -credits,
          refund_of: null,
          created_at: Date.now(),
        });
        return balance;
      });
    },

    recordExecTime(transactionRef, execMs, trx) {
      return store.setExecTime(trx ?? db, transactionRef, Math.max(0, Math.round(execMs)));
    },

    async balance(accountId) {
      const balance = await store.readBalance(db, accountId);
      if (balance === undefined) throw new AppError('ACCOUNT_NOT_FOUND', `No account has the id ${accountId}.`);
      return balance;
    },

    async list(accountId, page, filter = {}) {
      const [transactions, total] = await Promise.all([
        store.listTransactions(db, accountId, page, filter),
        store.countTransactions(db, accountId, filter),
      ]);
      return { transactions, total };
    },
  };
}

/** Why a grant changed nothing: no such account, or a balance that would pass MAX_BALANCE. */
async function grantRefusal(db: DbOrTx, accountId: string, credits: number): Promise<AppError> {
  const balance = await store.readBalance(db, accountId);
  if (balance === undefined) return new AppError('ACCOUNT_NOT_FOUND', `No account has the id ${accountId}.`);
  return new AppError(
    'BALANCE_LIMIT_EXCEEDED',
    `Adding ${credits} credits to the balance of ${balance} would pass the most an account may hold (${MAX_BALANCE}); add at most ${Math.max(0, MAX_BALANCE - balance)}.`,
  );
}
