/**
 * A small, bounded pool of parse threads (`worker_threads`) for large JSON bodies
 * (json-parse-worker.ts does the work; json-body-parser.ts decides which bodies come here).
 *
 * Bounds (config `http.jsonWorkers`, fixed in json-body-bounds.ts):
 * - threads: at most `threads`, started on the first large body (a process that never sees one starts
 *   none) and kept; one that dies is replaced on the next task;
 * - waiting: at most `queueLimit` bodies wait for a thread, all accounts together; past it, 503
 *   SERVICE_UNAVAILABLE (the server is parsing as much as it can);
 * - per account: at most `accountLimit` bodies waiting or being parsed; past it, 429 RATE_LIMITED,
 *   so one account's bodies cannot fill the line by themselves;
 * - memory: each thread's heap is capped at `memoryMb` (V8 resource limits). A body whose parse would
 *   need more, by an estimate read off its bytes first (json-heap-estimate.ts), is not parsed and gets
 *   413 PAYLOAD_TOO_LARGE; should the estimate ever fall short, the cap ends the thread instead, and
 *   the request gets the same 413.
 *
 * Order: the fair scheduler's (../../scheduling/fair-scheduler.ts, a work-conserving pool): a free
 * thread takes a body of the account with the fewest bodies being parsed, then of the account served
 * longest ago (round robin), then the oldest, so one account's line of bodies takes turns with another's
 * single body instead of going first; a lone account's bodies use every thread. Every body counts as
 * paid work: it is parsed before the route knows what the request is.
 *
 * A waiting body holds its bytes (at most the route's body limit); they are transferred to the thread,
 * not copied, when its turn comes.
 */
import type { Worker } from 'node:worker_threads';
import { isThreadOutOfMemory, startThread } from '../../shared/child-limits.js';
import { accountSlotsOf, FairScheduler, type PoolStats } from '../../scheduling/fair-scheduler.js';
import { AppError } from '../../shared/errors.js';
import type { ParseAnswer, ParseOutcome, ParseTask, ParseWorkerData } from './json-parse-worker.js';

export interface JsonParsePoolOptions {
  readonly threads: number;
  readonly queueLimit: number;
  readonly accountLimit: number;
  readonly memoryMb: number;
  /** Called once per body given to the pool, with how it ended and how long it took (waiting included). */
  readonly onSettled?: (outcome: JsonParsePoolOutcome, seconds: number) => void;
}

/** `parsed`, `invalid` (syntax or safety walk), `refused` (a bound), `failed` (a thread died). */
export type JsonParsePoolOutcome = 'parsed' | 'invalid' | 'refused' | 'failed';

export interface JsonParsePoolStats {
  readonly threads: number;
  readonly running: number;
  readonly waiting: number;
}

interface Task {
  readonly id: number;
  readonly bytes: Buffer;
  resolve(outcome: ParseOutcome): void;
  reject(error: Error): void;
}

interface Thread {
  readonly worker: Worker;
  task: Task | undefined;
}

/** A parse thread (json-parse-worker.ts) with its heap cap. */
function startWorker(memoryMb: number): Worker {
  const workerData: ParseWorkerData = { heapBytes: parseHeapBytes(memoryMb) };
  return startThread(import.meta.url, 'json-parse-worker', { name: 'json-parse', heapMb: memoryMb, workerData });
}

/** What a thread may spend on one body: its heap cap less what the thread itself holds (its code, Node's own). */
export function parseHeapBytes(memoryMb: number): number {
  return Math.max(0, memoryMb - THREAD_OWN_MB) * 1024 * 1024;
}

/** A parse thread's own heap before its first body, rounded up from what it measured (docs/performance-log/2026-11-22-to-28-service.md). */
const THREAD_OWN_MB = 32;

function bodyTooLarge(memoryMb: number): AppError {
  return new AppError(
    'PAYLOAD_TOO_LARGE',
    `The JSON body needs more than ${memoryMb} MB to parse, the most the server allows for one body (a bound that grows with PRESSROOM_BODY_LIMIT_BYTES). Send less data, or flatter data.`,
  );
}

/** The body's bytes as an ArrayBuffer that may be transferred: its own, or a copy when it shares one. */
function ownBuffer(bytes: Buffer): ArrayBuffer {
  const whole =
    bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
  return whole ? (bytes.buffer as ArrayBuffer) : (new Uint8Array(bytes).buffer as ArrayBuffer);
}

const shuttingDown = () =>
  new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down; retry on another instance.', {
    details: { retryAfterSeconds: 1 },
  });

export class JsonParsePool {
  private readonly threads: Thread[] = [];
  private readonly slots: FairScheduler;
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: JsonParsePoolOptions) {
    this.slots = new FairScheduler({
      name: 'json_parse',
      limits: {
        capacity: options.threads,
        queueLimit: options.queueLimit,
        accountSlots: accountSlotsOf(options.threads),
        workConserving: true,
        freeSlots: options.threads,
        // Never reached: `accountLimit` counts the account's bodies being parsed too, and is checked first.
        accountQueueLimit: options.accountLimit,
        accountFreeQueueLimit: options.accountLimit,
      },
      words: { task: 'large JSON body', slot: 'parse thread' },
      busy: () =>
        new AppError(
          'SERVICE_UNAVAILABLE',
          'The server is busy parsing other large request bodies; retry in a moment.',
          { details: { retryAfterSeconds: 1 } },
        ),
    });
  }

  /** Parses `bytes` (a JSON body) on a parse thread, for `account` (an account id, or a name for callers without one). */
  parse(bytes: Buffer, account: string): Promise<ParseOutcome> {
    const startedAt = performance.now();
    const refuse = (error: AppError): Promise<never> => {
      this.settled('refused', startedAt);
      return Promise.reject(error);
    };
    if (this.closed) return refuse(shuttingDown());
    if (this.slots.load(account) >= this.options.accountLimit) {
      return refuse(
        new AppError(
          'RATE_LIMITED',
          `At most ${this.options.accountLimit} large request bodies of one account are parsed at once; retry when one has been answered.`,
          {
            details: { retryAfterSeconds: 1 },
          },
        ),
      );
    }
    return this.slots.acquire({ accountId: account, kind: 'paid' }).then(
      (release) =>
        new Promise<ParseOutcome>((resolve, reject) => {
          const settle = (outcome: JsonParsePoolOutcome) => {
            release();
            this.settled(outcome, startedAt);
          };
          const task: Task = {
            id: this.nextId++,
            bytes,
            resolve: (outcome) => {
              settle(outcome.kind === 'syntax' || outcome.kind === 'unsafe' ? 'invalid' : 'parsed');
              resolve(outcome);
            },
            reject: (error) => {
              settle(error instanceof AppError && error.code === 'PAYLOAD_TOO_LARGE' ? 'refused' : 'failed');
              reject(error);
            },
          };
          if (this.closed) task.reject(shuttingDown());
          else this.start(task);
        }),
      (error: AppError) => refuse(error),
    );
  }

  /** The scheduler's view: threads, bodies being parsed and waiting (for the pool gauges of /metrics). */
  poolStats(): PoolStats {
    return this.slots.stats();
  }

  stats(): JsonParsePoolStats {
    const { active, waiting } = this.slots.stats();
    return { threads: this.threads.length, running: active, waiting };
  }

  /** Stops every thread; bodies waiting or being parsed get 503. */
  async close(): Promise<void> {
    this.closed = true;
    this.slots.refuseAll(shuttingDown());
    const threads = this.threads.splice(0);
    for (const thread of threads) thread.task?.reject(shuttingDown());
    await Promise.all(threads.map((t) => t.worker.terminate()));
  }

  private settled(outcome: JsonParsePoolOutcome, startedAt: number): void {
    this.options.onSettled?.(outcome, (performance.now() - startedAt) / 1000);
  }

  /**
   * Gives a body that holds a slot to an idle thread, or a new one: the scheduler grants no more slots
   * than `threads`, and a thread leaves the list before its body's slot is released.
   */
  private start(task: Task): void {
    const thread = this.threads.find((t) => !t.task) ?? this.startThread();
    thread.task = task;
    const buffer = ownBuffer(task.bytes);
    const message: ParseTask = { id: task.id, bytes: buffer };
    thread.worker.postMessage(message, [buffer]);
  }

  private startThread(): Thread {
    const thread: Thread = { worker: startWorker(this.options.memoryMb), task: undefined };
    // Idle threads must not keep the process alive; a body being parsed has its request doing that.
    thread.worker.unref();
    thread.worker.on('message', (answer: ParseAnswer) => {
      const task = thread.task;
      if (!task || task.id !== answer.id) return;
      thread.task = undefined;
      if (answer.outcome.kind === 'tooLarge') task.reject(bodyTooLarge(this.options.memoryMb));
      else task.resolve(answer.outcome);
    });
    let failure: Error | undefined;
    thread.worker.on('error', (error: Error & { code?: string }) => {
      failure = isThreadOutOfMemory(error) ? bodyTooLarge(this.options.memoryMb) : error;
    });
    thread.worker.on('exit', () => {
      const index = this.threads.indexOf(thread);
      if (index >= 0) this.threads.splice(index, 1);
      const task = thread.task;
      thread.task = undefined;
      task?.reject(failure ?? new Error('a JSON parse thread stopped'));
    });
    this.threads.push(thread);
    return thread;
  }
}
