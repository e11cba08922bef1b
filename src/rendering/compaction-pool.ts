/**
 * Runs compaction (pdf-compaction.ts) on a few `worker_threads` threads, one PDF per thread at a time,
 * so neither the event loop nor a Chromium render slot waits for it. Threads start on first use and
 * are kept; a PDF waits its turn in a FIFO line. A PDF comes as bytes (a copy goes to the thread) or,
 * when long, as a spooled file the thread reads and compacts into another file.
 *
 * Compaction is an optimisation: every way it can end other than a smaller file (no time left, the
 * thread died, a file of a shape it does not handle) gives the caller its PDF back unchanged, with a
 * reason, and never fails the document. A run past its `timeoutMs` has its thread terminated and
 * replaced. A thread's heap has a ceiling (`COMPACTION_HEAP_MB`); a thread that reaches it is ended
 * by Node and its PDF goes back unchanged with the reason `failed: out of memory (…)` (counted as failed).
 */
import { Worker } from 'node:worker_threads';
import { isThreadOutOfMemory, threadResourceLimits } from '../shared/child-limits.js';
import type { CompactionAnswer, CompactionTask } from './compaction-worker.js';
import type { Compaction } from './pdf-compaction.js';
import type { PdfFile } from './pdf-file.js';

export type { Compaction } from './pdf-compaction.js';

/** The outcome for a PDF in a file: the compacted file, or the input file unchanged with the reason. */
export type FileCompaction =
  | { compacted: true; file: PdfFile; bytesBefore: number; bytesAfter: number }
  | { compacted: false; file: PdfFile; bytesBefore: number; bytesAfter: number; reason: string };

/** How a PDF's compaction ended, before it is turned into its caller's result. */
type Outcome = { answer: CompactionAnswer } | { reason: string };

interface Job {
  readonly deadline: number;
  /** The message for the thread, and what it transfers. */
  message(id: number): { task: CompactionTask; transfer: ArrayBuffer[] };
  settle(outcome: Outcome): void;
}

/** The reason an answer that is not a compacted file gives. */
function reasonOf(answer: CompactionAnswer): string {
  return answer.error ? `failed: ${answer.error}` : (answer.reason ?? 'not compacted');
}

/**
 * A compaction thread's heap ceiling. Its objects' table and the PDF's bytes live outside the heap (typed
 * arrays, Buffers: bounded by the object-number cap and the PDF byte bound); the heap holds the rest,
 * and the 51.6 MB, 285,000-object tagged report compacts in a thread capped at 24 MB (under tsx).
 */
const COMPACTION_HEAP_MB = 256;

/** The compiled worker beside this file; from source (vitest, tsx) the .ts file through tsx's loader. */
function startWorker(): Worker {
  const resourceLimits = threadResourceLimits(COMPACTION_HEAP_MB);
  if (import.meta.url.endsWith('.ts')) {
    const source = new URL('./compaction-worker.ts', import.meta.url).href;
    const bootstrap = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); });`;
    return new Worker(bootstrap, { eval: true, resourceLimits, name: 'pdf-compaction' });
  }
  return new Worker(new URL('./compaction-worker.js', import.meta.url), { resourceLimits, name: 'pdf-compaction' });
}

export class CompactionPool {
  readonly #idle: Worker[] = [];
  readonly #line: Job[] = [];
  #started = 0;
  #nextId = 1;
  #closed = false;

  constructor(private readonly threads: number) {}

  /** `pdf` compacted, or unchanged with a reason; gives up (unchanged, reason `timeout`) after `timeoutMs`, waiting included. */
  compact(pdf: Buffer, timeoutMs: number): Promise<Compaction> {
    return this.#enqueue(timeoutMs, (resolve) => ({
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
          resolve({ compacted: false, pdf, bytesBefore: pdf.length, bytesAfter: pdf.length, reason: 'answer' in outcome ? reasonOf(outcome.answer) : outcome.reason });
        }
      },
    }));
  }

  /**
   * The PDF in `input` compacted into a new file at `outputPath`, read and written by the thread, so
   * the event loop holds neither; or `input` unchanged with a reason, as `compact`. The caller removes
   * both files when done (`outputPath` may hold a partial file after a timeout).
   */
  compactFile(input: PdfFile, outputPath: string, timeoutMs: number): Promise<FileCompaction> {
    return this.#enqueue(timeoutMs, (resolve) => ({
      message: (id) => ({ task: { id, inputPath: input.path, outputPath }, transfer: [] }),
      settle: (outcome) => {
        if ('answer' in outcome && outcome.answer.compacted && outcome.answer.bytesAfter !== undefined) {
          const { bytesBefore = input.size, bytesAfter } = outcome.answer;
          resolve({ compacted: true, file: { path: outputPath, size: bytesAfter }, bytesBefore, bytesAfter });
        } else {
          resolve({ compacted: false, file: input, bytesBefore: input.size, bytesAfter: input.size, reason: 'answer' in outcome ? reasonOf(outcome.answer) : outcome.reason });
        }
      },
    }));
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#line.splice(0)) job.settle({ reason: 'shutting down' });
    await Promise.all(this.#idle.splice(0).map((worker) => worker.terminate()));
  }

  /** Puts a job in line; it settles unchanged at once when the pool is closed or no time is left. */
  #enqueue<T>(timeoutMs: number, job: (resolve: (result: T) => void) => Omit<Job, 'deadline'>): Promise<T> {
    return new Promise((resolve) => {
      const queued: Job = { ...job(resolve), deadline: performance.now() + timeoutMs };
      if (this.#closed) return queued.settle({ reason: 'shutting down' });
      if (timeoutMs <= 0) return queued.settle({ reason: 'timeout' });
      this.#line.push(queued);
      this.#dispatch();
    });
  }

  #dispatch(): void {
    while (this.#line.length > 0 && (this.#idle.length > 0 || this.#started < this.threads)) {
      const job = this.#line.shift()!;
      const left = job.deadline - performance.now();
      if (left <= 0) {
        job.settle({ reason: 'timeout' });
        continue;
      }
      let worker = this.#idle.pop();
      if (!worker) {
        worker = startWorker();
        this.#started += 1;
      }
      this.#run(worker, job, left);
    }
  }

  #run(worker: Worker, job: Job, timeoutMs: number): void {
    const id = this.#nextId++;
    let settled = false;
    const finish = (outcome: Outcome, keepWorker: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onGone);
      worker.off('exit', onGone);
      if (keepWorker && !this.#closed) {
        this.#idle.push(worker);
        job.settle(outcome);
      } else {
        this.#started -= 1;
        // Settled once the thread is gone: a thread cut off while writing a spooled file must not write
        // it after its caller removed it.
        void worker.terminate().finally(() => job.settle(outcome));
      }
      this.#dispatch();
    };
    const onMessage = (answer: CompactionAnswer) => {
      if (answer.id === id) finish({ answer }, true);
    };
    const onGone = (error?: unknown) => finish({ reason: isThreadOutOfMemory(error) ? `failed: out of memory (${COMPACTION_HEAP_MB} MB heap)` : 'thread ended' }, false);
    const timer = setTimeout(() => finish({ reason: 'timeout' }, false), timeoutMs);
    worker.on('message', onMessage);
    worker.once('error', onGone);
    worker.once('exit', onGone);
    const { task, transfer } = job.message(id);
    worker.postMessage(task, transfer);
  }
}
