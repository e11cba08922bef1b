/**
 * libxml2's xmllint (xmllint-wasm) on a few long-lived `worker_threads` threads (xmllint-worker.ts),
 * one check per thread at a time. Who checks next is the fair scheduler's choice
 * (../scheduling/fair-scheduler.ts), a strict pool: a hostile XML (hundreds of thousands of attributes,
 * each a schema finding) keeps its thread for many seconds, so one account never holds more than
 * `threads` − 2 of them (each check takes a core), and another account's check always finds one (issue
 * 37); free checks at most `threads` − 1, one account's one (issue 49).
 *
 * xmllint-wasm's own `validateXML` starts a thread, then reads and compiles its 0.8 MB WebAssembly
 * module, for every call, which costs far more than the check itself (figures: docs/performance-log/2026-11-22-to-28-service.md). Here
 * `xmllint.wasm` is compiled once per process, the `WebAssembly.Module` is handed to every thread,
 * and each check instantiates it afresh (cheap next to compiling): libxml2's global state, its
 * in-memory files and its wasm memory never outlive the check they belong to.
 *
 * Bounds:
 * - threads: at most `threads` (../../shared/task-threads.ts), started on first use and kept; an idle
 *   thread does not keep the process alive (unref), a thread with a check does (ref);
 * - memory: each check's wasm memory may grow to the `maxMemoryPages` of its task, no further; the
 *   thread's JS heap (the check's files and what xmllint prints, as strings) to `XMLLINT_HEAP_MB`: a
 *   thread that reaches it is ended by Node and its check answers an error;
 * - time: a check that has not answered within `timeoutMs` of reaching its thread (a hang or a loop
 *   in libxml2) has its thread terminated, and answers an error; a thread that dies answers its check
 *   with an error too. A replacement starts on the next check. A check waits for a thread at most
 *   `timeoutMs` too (then SERVICE_UNAVAILABLE, 503);
 * - line: at most XML_CHECK_QUEUE_LIMIT checks wait, XML_CHECK_ACCOUNT_QUEUE_LIMIT of one account
 *   (then 503, or 429 RATE_LIMITED).
 *
 * `close()` ends the idle threads at once and each busy one as soon as its check answered; the pool
 * stays usable (a later check starts a thread again), since one pool serves the whole process.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { Worker } from 'node:worker_threads';
import { accountSlotsOf, FairScheduler, type PoolStats, type Ticket } from '../../scheduling/fair-scheduler.js';
import { AppError } from '../../shared/errors.js';
import { TaskThreads } from '../../shared/task-threads.js';
import { wasm, type WasmModule } from './wasm.js';
import type { XmllintAnswer, XmllintTask, XmllintWorkerData } from './xmllint-worker.js';

/** One xmllint run: its files, its command line (without the program name) and its memory bound. */
export interface XmllintRun {
  readonly inputFiles: readonly { fileName: string; contents: string }[];
  readonly args: readonly string[];
  /** In 64 KiB pages. */
  readonly maxMemoryPages: number;
}

/** What xmllint printed and how it exited (as xmllint-wasm's worker reports it: −1 after an abort). */
export interface XmllintOutput {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface XmllintPoolOptions {
  readonly threads: number;
  readonly timeoutMs: number;
  /** Called with each thread as it starts (tests end threads with it). */
  readonly onThreadStart?: (worker: Worker) => void;
}

/**
 * Checks waiting for a thread, all accounts and one account: a waiting check holds its XML (up to
 * 5 Mi characters); an e-invoice request makes one to four checks, so an account's share is a dozen requests.
 */
const XML_CHECK_QUEUE_LIMIT = 128;
const XML_CHECK_ACCOUNT_QUEUE_LIMIT = 32;

/** xmllint-wasm's default initial memory (16 MiB); the memory grows on demand up to the run's maximum. */
const INITIAL_MEMORY_PAGES = 256;

let compiled: Promise<WasmModule> | undefined;
/** xmllint.wasm compiled, once per process (a failure is retried by the next check). */
function compiledModule(): Promise<WasmModule> {
  if (!compiled) {
    const attempt = readFile(createRequire(import.meta.url).resolve('xmllint-wasm/xmllint.wasm')).then((bytes) =>
      wasm.compile(bytes),
    );
    attempt.catch(() => {
      if (compiled === attempt) compiled = undefined;
    });
    compiled = attempt;
  }
  return compiled;
}

/**
 * An xmllint thread's JS heap ceiling (the wasm memory is outside it, bounded per check by `maxMemoryPages`):
 * twice the most an honest check was measured to need (docs/operations.md "Ceilings of child processes
 * and threads"). Printing is what costs: Emscripten collects each line xmllint prints as an array of
 * numbers, so an XPath value of 5 Mi characters on one line (the largest XML, all text) is the worst case.
 */
const XMLLINT_HEAP_MB = 512;

export class XmllintPool {
  readonly #threads: TaskThreads;
  readonly #slots: FairScheduler;
  #module: WasmModule | undefined;
  #nextId = 1;
  #closes = 0;

  constructor(private readonly options: XmllintPoolOptions) {
    this.#threads = new TaskThreads({
      callerUrl: import.meta.url,
      worker: 'xmllint-worker',
      name: 'xmllint',
      heapMb: XMLLINT_HEAP_MB,
      maxIdle: this.options.threads,
      onStart: this.options.onThreadStart,
      workerData: () => ({ module: this.#module! }) satisfies XmllintWorkerData,
    });
    this.#slots = new FairScheduler({
      name: 'xmllint',
      limits: {
        capacity: options.threads,
        queueLimit: XML_CHECK_QUEUE_LIMIT,
        // One thread fewer than the pool's free share: each check takes a core, and the machine may have two.
        accountSlots: accountSlotsOf(options.threads - 1),
        workConserving: false,
        // Free checks (POST /v1/einvoice/validate) leave a thread to paid ones, one account's one thread (issue 49).
        freeSlots: accountSlotsOf(options.threads),
        accountFreeSlots: 1,
        accountQueueLimit: XML_CHECK_ACCOUNT_QUEUE_LIMIT,
        accountFreeQueueLimit: XML_CHECK_ACCOUNT_QUEUE_LIMIT,
      },
      words: { task: 'XML check', slot: 'XML check thread' },
      busy: (reason) =>
        new AppError('SERVICE_UNAVAILABLE', 'The XML checks are busy; retry shortly. Nothing was charged.', {
          details: { retryAfterSeconds: 2, reason },
        }),
    });
  }

  /**
   * Runs xmllint once on a fresh instance, when `ticket`'s turn comes; rejects when it timed out
   * (`timeoutMs`, from reaching a thread) or its thread died, and with the scheduler's refusals.
   */
  async run(run: XmllintRun, ticket: Ticket, timeoutMs = this.options.timeoutMs): Promise<XmllintOutput> {
    const closes = this.#closes;
    this.#module ??= await compiledModule();
    const release = await this.#slots.acquire(ticket, { maxWaitMs: this.options.timeoutMs });
    try {
      const id = this.#nextId++;
      const end = await this.#threads.run<XmllintAnswer, XmllintAnswer>({
        message: {
          id,
          inputFiles: run.inputFiles,
          args: run.args,
          initialMemoryPages: Math.min(INITIAL_MEMORY_PAGES, run.maxMemoryPages),
          maxMemoryPages: run.maxMemoryPages,
        } satisfies XmllintTask,
        timeoutMs,
        // Asked for before a close(): its thread ends after it.
        keepThread: closes === this.#closes,
        read: (answer) => (answer?.id === id ? answer : undefined),
      });
      if (end.ended === 'timeout') throw tooComplex(`did not finish within ${timeoutMs / 1000} s and was stopped`);
      if (end.ended === 'out-of-memory') throw tooComplex(`stopped: it reached its ${XMLLINT_HEAP_MB} MB heap ceiling`);
      if (end.ended === 'failed') throw tooComplex(`stopped: ${(end.error as Error | undefined)?.message}`);
      const answer = end.answer;
      if ('error' in answer) throw tooComplex(`stopped in libxml2 (${answer.error})`);
      return { exitCode: answer.exitCode, stdout: answer.stdout, stderr: answer.stderr };
    } finally {
      release();
    }
  }

  /** The checks holding a slot (`active`) and waiting for one; threads running, and those with a check. */
  stats(): PoolStats & { threads: number; busy: number } {
    return { ...this.#slots.stats(), threads: this.#threads.threads, busy: this.#threads.running };
  }

  /** Ends the idle threads now and the busy ones once their check answered; resolves when all have exited. */
  async close(): Promise<void> {
    this.#closes += 1;
    await this.#threads.restart();
  }
}

/**
 * A check that ran out of time or memory: the XML asks for more than one check may spend (a crafted
 * document, or one far past any real invoice), so the request is refused, never answered with a 500.
 */
function tooComplex(what: string): AppError {
  return new AppError(
    'XML_TOO_COMPLEX',
    `The XML check ${what}; the document asks for more than one check may spend. Nothing was charged. Send a smaller or simpler document.`,
  );
}
