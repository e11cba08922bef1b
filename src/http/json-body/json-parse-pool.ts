/**
 * A small, bounded pool of parse threads (`worker_threads`) for large JSON bodies
 * (json-parse-worker.ts does the work; json-body-parser.ts decides which bodies come here).
 *
 * Bounds (config `http.jsonWorkers`, fixed in json-body-bounds.ts):
 * - threads: at most `threads` (../../shared/task-threads.ts), started on the first large body (a process
 *   that never sees one starts none) and kept; one that dies is replaced on the next task; a parse is
 *   linear in its bytes, so its deadline (`PARSE_DEADLINE_MS`) is only a last stop;
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
import { accountSlotsOf, FairScheduler, type PoolStats } from '../../scheduling/fair-scheduler.js';
import { AppError } from '../../shared/errors.js';
import { TaskThreads } from '../../shared/task-threads.js';
import type { ParseAnswer, ParseOutcome, ParseTask } from './json-parse-worker.js';

/** A parse of the largest body the server takes is seconds; a thread still at it after this is stuck. */
const PARSE_DEADLINE_MS = 120_000;

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
  private readonly threads: TaskThreads;
  private readonly slots: FairScheduler;
  private closed = false;
  /** Stops the bodies being parsed when the pool closes. */
  private readonly closing = new AbortController();

  constructor(private readonly options: JsonParsePoolOptions) {
    this.threads = new TaskThreads({
      callerUrl: import.meta.url,
      worker: 'json-parse-worker',
      name: 'json-parse',
      heapMb: options.memoryMb,
      maxIdle: options.threads,
    });
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
  async parse(bytes: Buffer, account: string): Promise<ParseOutcome> {
    const startedAt = performance.now();
    let outcome: JsonParsePoolOutcome = 'failed';
    try {
      if (this.closed) throw refused(shuttingDown());
      if (this.slots.load(account) >= this.options.accountLimit) {
        throw refused(
          new AppError(
            'RATE_LIMITED',
            `At most ${this.options.accountLimit} large request bodies of one account are parsed at once; retry when one has been answered.`,
            { details: { retryAfterSeconds: 1 } },
          ),
        );
      }
      const release = await this.slots
        .acquire({ accountId: account, kind: 'paid' })
        .catch((error: unknown) => Promise.reject(refused(error)));
      try {
        const parsed = await this.run(bytes);
        outcome = parsed.kind === 'syntax' || parsed.kind === 'unsafe' ? 'invalid' : 'parsed';
        return parsed;
      } finally {
        release();
      }
    } catch (error) {
      if (error instanceof Refused) {
        outcome = 'refused';
        throw error.error;
      }
      if (error instanceof AppError && error.code === 'PAYLOAD_TOO_LARGE') outcome = 'refused';
      throw error;
    } finally {
      this.options.onSettled?.(outcome, (performance.now() - startedAt) / 1000);
    }
  }

  /** The scheduler's view: threads, bodies being parsed and waiting (for the pool gauges of /metrics). */
  poolStats(): PoolStats {
    return this.slots.stats();
  }

  stats(): JsonParsePoolStats {
    const { active, waiting } = this.slots.stats();
    return { threads: this.threads.threads, running: active, waiting };
  }

  /** Stops every thread; bodies waiting or being parsed get 503. */
  async close(): Promise<void> {
    this.closed = true;
    this.slots.refuseAll(shuttingDown());
    this.closing.abort(shuttingDown());
    await this.threads.close();
  }

  /** One body on a thread: its bytes transferred, not copied. */
  private async run(bytes: Buffer): Promise<ParseOutcome> {
    if (this.closed) throw shuttingDown();
    const buffer = ownBuffer(bytes);
    const message: ParseTask = { bytes: buffer, heapBytes: parseHeapBytes(this.options.memoryMb) };
    const end = await this.threads.run<ParseAnswer, ParseAnswer>({
      message,
      transfer: [buffer],
      timeoutMs: PARSE_DEADLINE_MS,
      signal: this.closing.signal,
      read: (answer) => answer,
    });
    if (end.ended === 'out-of-memory') throw bodyTooLarge(this.options.memoryMb);
    if (end.ended === 'timeout') throw new Error('a JSON parse thread went past its deadline');
    if (end.ended === 'failed') throw end.error instanceof Error ? end.error : new Error('a JSON parse thread stopped');
    if (end.answer.outcome.kind === 'tooLarge') throw bodyTooLarge(this.options.memoryMb);
    return end.answer.outcome;
  }
}

/** A refusal before any parse: counted as `refused`, whatever its error. */
class Refused {
  constructor(readonly error: unknown) {}
}
const refused = (error: unknown) => new Refused(error);
