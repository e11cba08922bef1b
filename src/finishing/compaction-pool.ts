/**
 * Runs compaction (pdf-compaction.ts) on a few `worker_threads` threads, one PDF per thread at a time,
 * so neither the event loop nor a Chromium render slot waits for it. Threads start on first use and
 * are kept. Who compacts next is the fair scheduler's choice (../scheduling/fair-scheduler.ts, a
 * work-conserving pool: documents before previews, accounts in turn, a lone account on every thread).
 * A PDF comes as bytes (a copy goes to the thread) or, when long, as a spooled file the thread reads
 * and compacts into another file.
 *
 * Compaction is an optimisation: every way it can end other than a smaller file (no time left, the
 * thread died, a file of a shape it does not handle) gives the caller its PDF back unchanged, with a
 * reason, and never fails the document: a line too long for it too. A run past its `timeoutMs`
 * (waiting included) has its thread terminated and replaced. A thread's heap has a ceiling
 * (`COMPACTION_HEAP_MB`); a thread that reaches it is ended by Node and its PDF goes back unchanged
 * with the reason `failed: out of memory (…)` (counted as failed).
 */
import { TaskThreads } from '../shared/task-threads.js';
import { accountSlotsOf, FairScheduler, type PoolStats, type Ticket } from '../scheduling/fair-scheduler.js';
import { AppError } from '../shared/errors.js';
import type { CompactionAnswer, CompactionTask as ThreadTask } from './compaction-worker.js';
import type { Compaction } from './pdf-compaction.js';
import type { PdfFile } from '../pdf/pdf-file.js';

export type { Compaction } from './pdf-compaction.js';

/** The outcome for a PDF in a file: the compacted file, or the input file unchanged with the reason. */
export type FileCompaction =
  | { compacted: true; file: PdfFile; bytesBefore: number; bytesAfter: number }
  | { compacted: false; file: PdfFile; bytesBefore: number; bytesAfter: number; reason: string };

/** How a PDF's compaction ended, before it is turned into its caller's result. */
type Outcome = { answer: CompactionAnswer } | { reason: string };

/** A PDF's time budget (what is left of its render deadline, waiting included) and whose it is. */
export interface CompactionTask {
  timeoutMs: number;
  ticket: Ticket;
}

/**
 * PDFs waiting for a thread, all accounts together, and of one account: a PDF in a longer line would
 * mostly wait out its deadline, so it leaves uncompacted at once instead (nothing fails).
 */
const COMPACTION_QUEUE_LIMIT = 64;
const COMPACTION_ACCOUNT_QUEUE_LIMIT = 16;

interface Job {
  readonly deadline: number;
  /** The message for the thread, and what it transfers. */
  message(id: number): { task: ThreadTask; transfer: ArrayBuffer[] };
  settle(outcome: Outcome): void;
}

/** Why a PDF got no thread other than its time running out: a line too long, or the pool closing. */
function refusalReason(refusal: unknown): string {
  if (refusal instanceof AppError) return `busy: ${String(refusal.details?.reason ?? refusal.message)}`;
  return refusal instanceof Error ? refusal.message : String(refusal);
}

/** The reason an answer that is not a compacted file gives. */
function reasonOf(answer: CompactionAnswer): string {
  return answer.error ? `failed: ${answer.error}` : (answer.reason ?? 'not compacted');
}

/**
 * A compaction thread's heap ceiling. Its objects' table and the PDF's bytes live outside the heap (typed
 * arrays, Buffers: bounded by the object-number cap and the PDF byte bound); the heap holds the rest,
 * a small part of this (the largest report measured fits a tenth of it: docs/long-documents.md "Compaction").
 */
const COMPACTION_HEAP_MB = 256;

export class CompactionPool {
  readonly #threads: TaskThreads;
  readonly #slots: FairScheduler;
  #nextId = 1;
  #closed = false;

  constructor(threads: number) {
    this.#threads = new TaskThreads({
      callerUrl: import.meta.url,
      worker: 'compaction-worker',
      name: 'pdf-compaction',
      heapMb: COMPACTION_HEAP_MB,
      maxIdle: threads,
    });
    const shared = accountSlotsOf(threads);
    this.#slots = new FairScheduler({
      name: 'compaction',
      limits: {
        capacity: threads,
        queueLimit: COMPACTION_QUEUE_LIMIT,
        accountSlots: shared,
        workConserving: true,
        freeSlots: shared,
        accountQueueLimit: COMPACTION_ACCOUNT_QUEUE_LIMIT,
        accountFreeQueueLimit: COMPACTION_ACCOUNT_QUEUE_LIMIT,
      },
      words: { task: 'compaction', slot: 'compaction thread' },
      busy: (reason) => new AppError('SERVICE_UNAVAILABLE', 'The compaction threads are busy', { details: { reason } }),
    });
  }

  /** Threads compacting and PDFs waiting for one. */
  stats(): PoolStats {
    return this.#slots.stats();
  }

  /** `pdf` compacted, or unchanged with a reason; gives up (unchanged, reason `timeout`) after `timeoutMs`, waiting included. */
  compact(pdf: Buffer, task: CompactionTask): Promise<Compaction> {
    return this.#enqueue(task, (resolve) => ({
      // A copy goes to the thread (transferred, not copied again): the caller keeps `pdf` to fall back on.
      message: (id) => {
        const bytes = new Uint8Array(pdf).buffer as ArrayBuffer;
        return { task: { id, bytes }, transfer: [bytes] };
      },
      settle: (outcome) => {
        if ('answer' in outcome && outcome.answer.compacted && outcome.answer.bytes) {
          const out = Buffer.from(outcome.answer.bytes);
          resolve({ compacted: true, pdf: out, bytesBefore: pdf.length, bytesAfter: out.length });
        } else {
          resolve({
            compacted: false,
            pdf,
            bytesBefore: pdf.length,
            bytesAfter: pdf.length,
            reason: 'answer' in outcome ? reasonOf(outcome.answer) : outcome.reason,
          });
        }
      },
    }));
  }

  /**
   * The PDF in `input` compacted into a new file at `outputPath`, read and written by the thread, so
   * the event loop holds neither; or `input` unchanged with a reason, as `compact`. The caller removes
   * both files when done (`outputPath` may hold a partial file after a timeout).
   */
  compactFile(input: PdfFile, outputPath: string, task: CompactionTask): Promise<FileCompaction> {
    return this.#enqueue(task, (resolve) => ({
      message: (id) => ({ task: { id, inputPath: input.path, outputPath }, transfer: [] }),
      settle: (outcome) => {
        if ('answer' in outcome && outcome.answer.compacted && outcome.answer.bytesAfter !== undefined) {
          const { bytesBefore = input.size, bytesAfter } = outcome.answer;
          resolve({ compacted: true, file: { path: outputPath, size: bytesAfter }, bytesBefore, bytesAfter });
        } else {
          resolve({
            compacted: false,
            file: input,
            bytesBefore: input.size,
            bytesAfter: input.size,
            reason: 'answer' in outcome ? reasonOf(outcome.answer) : outcome.reason,
          });
        }
      },
    }));
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#slots.refuseAll(new Error('shutting down'));
    await this.#threads.close();
  }

  /**
   * Puts a job in line for a thread; it settles unchanged at once when the pool is closed or no time
   * is left, and when the line is too long or its time ran out while waiting.
   */
  #enqueue<T>(
    { timeoutMs, ticket }: CompactionTask,
    job: (resolve: (result: T) => void) => Omit<Job, 'deadline'>,
  ): Promise<T> {
    return new Promise((resolve) => {
      const queued: Job = { ...job(resolve), deadline: performance.now() + timeoutMs };
      if (this.#closed) return queued.settle({ reason: 'shutting down' });
      if (timeoutMs <= 0) return queued.settle({ reason: 'timeout' });
      const waitedOut = AbortSignal.timeout(Math.ceil(timeoutMs));
      this.#slots.acquire(ticket, { signal: waitedOut }).then(
        (release) => {
          const left = queued.deadline - performance.now();
          if (this.#closed || left <= 0) {
            release();
            return queued.settle({ reason: this.#closed ? 'shutting down' : 'timeout' });
          }
          void this.#run(queued, left).finally(release);
        },
        (refusal: unknown) => queued.settle({ reason: waitedOut.aborted ? 'timeout' : refusalReason(refusal) }),
      );
    });
  }

  /** One job on a thread (the scheduler grants at most `threads` slots, so threads never outnumber them). */
  async #run(job: Job, timeoutMs: number): Promise<void> {
    const id = this.#nextId++;
    const { task, transfer } = job.message(id);
    const end = await this.#threads.run<CompactionAnswer, CompactionAnswer>({
      message: task,
      transfer,
      timeoutMs,
      read: (answer) => (answer.id === id ? answer : undefined),
    });
    if (end.ended === 'answer') return job.settle({ answer: end.answer });
    const reason = {
      timeout: 'timeout',
      'out-of-memory': `failed: out of memory (${COMPACTION_HEAP_MB} MB heap)`,
      failed: 'thread ended',
    }[end.ended];
    job.settle({ reason });
  }
}
