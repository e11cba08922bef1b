/**
 * The signing pool: its slots, shared by the one fair scheduler (scheduling/fair-scheduler.ts), and the
 * threads the slots' work runs on (signing-threads.ts). Paid work: signatures (POST /v1/pdf-tools/sign,
 * `sign` on create). Free work: opening an uploaded certificate (POST /v1/certificates) and reading a
 * PDF's signatures (POST /v1/pdf-tools/verify, pdfsig in a child). A strict pool, as qpdf's: tasks take
 * milliseconds on ordinary input and up to their deadline on a hostile one, and cannot be taken back,
 * so one account holds at most `slots` − 1 slots and free work at most `slots` − 1 in all, even with
 * slots idle: a second account, and a paid signature, always find one (issue 49). Every task has a
 * deadline: a thread's is `timeoutMs` (the thread is ended past it), pdfsig's is its own (verify.ts).
 */
import { accountSlotsOf, FairScheduler, type PoolStats, type Ticket } from '../scheduling/fair-scheduler.js';
import { AppError } from '../shared/errors.js';
import { SigningThreads, type ThreadSignature } from './signing-threads.js';
import type { SignTask } from './signing-worker.js';

/** Tasks that may wait for a slot, all accounts together; one account may fill a quarter. */
const SIGNING_QUEUE_LIMIT = 100;

export interface SigningPoolOptions {
  /** Slots: tasks at once (signingSlotsFor in signing-bounds.ts). */
  slots: number;
  /** Deadline of one task on a thread. */
  timeoutMs: number;
  /** Longest wait for a slot. */
  maxWaitMs: number;
}

export interface SigningPool {
  /** A signature on a thread, in a slot; `task` is made once the slot is granted. */
  sign(ticket: Ticket, task: () => Omit<SignTask, 'id' | 'kind'>, context: ThreadSignature): Promise<Buffer>;
  /** An uploaded PKCS#12 opened and checked on a thread, in a free slot: its certificate (DER); throws Pkcs12Refusal. */
  openCertificate(accountId: string, p12: Uint8Array, password: string): Promise<Uint8Array>;
  /** Other work in a slot (verify's pdfsig). */
  run<T>(ticket: Ticket, work: () => Promise<T>): Promise<T>;
  stats(): PoolStats;
  close(): Promise<void>;
}

export function createSigningPool(options: SigningPoolOptions): SigningPool {
  const threads = new SigningThreads({ slots: options.slots, timeoutMs: options.timeoutMs });
  const share = accountSlotsOf(options.slots);
  const slots = new FairScheduler({
    name: 'signing',
    limits: {
      capacity: options.slots,
      queueLimit: SIGNING_QUEUE_LIMIT,
      accountSlots: share,
      workConserving: false,
      freeSlots: share,
      accountQueueLimit: Math.ceil(SIGNING_QUEUE_LIMIT / 4),
      accountFreeQueueLimit: Math.ceil(SIGNING_QUEUE_LIMIT / 4),
    },
    words: { task: 'signing task', freeTask: 'certificate or signature check', slot: 'signing slot' },
    busy: (reason) =>
      new AppError('SERVICE_UNAVAILABLE', 'Signing is busy; retry shortly. Nothing was charged.', {
        details: { retryAfterSeconds: 2, reason },
      }),
  });
  const wait = { maxWaitMs: options.maxWaitMs };

  return {
    sign: (ticket, task, context) => slots.run(ticket, () => threads.sign(task(), context), wait),
    openCertificate: (accountId, p12, password) =>
      slots.run({ accountId, kind: 'free' }, () => threads.open(p12, password), wait),
    run: (ticket, work) => slots.run(ticket, work, wait),
    stats: () => slots.stats(),
    close: () => threads.close(),
  };
}
