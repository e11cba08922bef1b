/**
 * Runs compaction (pdf-compaction.ts) on a few `worker_threads` threads, one PDF per thread at a time,
 * so neither the event loop nor a Chromium render slot waits for it. Threads start on first use and
 * are kept; a PDF waits its turn in a FIFO line.
 *
 * Compaction is an optimisation: every way it can end other than a smaller file (no time left, the
 * thread died, a file of a shape it does not handle) gives the caller its PDF back unchanged, with a
 * reason, and never fails the document. A run past its `timeoutMs` has its thread terminated and
 * replaced.
 */
import { Worker } from 'node:worker_threads';
import type { CompactionAnswer, CompactionTask } from './compaction-worker.js';
import type { Compaction } from './pdf-compaction.js';

export type { Compaction } from './pdf-compaction.js';

interface Job {
  readonly pdf: Buffer;
  readonly deadline: number;
  resolve(result: Compaction): void;
}

/** The compiled worker beside this file; from source (vitest, tsx) the .ts file through tsx's loader. */
function startWorker(): Worker {
  if (import.meta.url.endsWith('.ts')) {
    const source = new URL('./compaction-worker.ts', import.meta.url).href;
    const bootstrap = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(source)}); });`;
    return new Worker(bootstrap, { eval: true, name: 'pdf-compaction' });
  }
  return new Worker(new URL('./compaction-worker.js', import.meta.url), { name: 'pdf-compaction' });
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
    const unchanged = (reason: string): Compaction => ({ compacted: false, pdf, bytesBefore: pdf.length, bytesAfter: pdf.length, reason });
    if (this.#closed) return Promise.resolve(unchanged('shutting down'));
    if (timeoutMs <= 0) return Promise.resolve(unchanged('timeout'));
    return new Promise((resolve) => {
      this.#line.push({ pdf, deadline: performance.now() + timeoutMs, resolve });
      this.#dispatch();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#line.splice(0)) job.resolve({ compacted: false, pdf: job.pdf, bytesBefore: job.pdf.length, bytesAfter: job.pdf.length, reason: 'shutting down' });
    await Promise.all(this.#idle.splice(0).map((worker) => worker.terminate()));
  }

  #dispatch(): void {
    while (this.#line.length > 0 && (this.#idle.length > 0 || this.#started < this.threads)) {
      const job = this.#line.shift()!;
      const left = job.deadline - performance.now();
      if (left <= 0) {
        job.resolve({ compacted: false, pdf: job.pdf, bytesBefore: job.pdf.length, bytesAfter: job.pdf.length, reason: 'timeout' });
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
    const { pdf } = job;
    let settled = false;
    const finish = (result: Compaction, keepWorker: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('error', onGone);
      worker.off('exit', onGone);
      if (keepWorker && !this.#closed) this.#idle.push(worker);
      else {
        this.#started -= 1;
        void worker.terminate();
      }
      job.resolve(result);
      this.#dispatch();
    };
    const unchanged = (reason: string): Compaction => ({ compacted: false, pdf, bytesBefore: pdf.length, bytesAfter: pdf.length, reason });
    const onMessage = (answer: CompactionAnswer) => {
      if (answer.id !== id) return;
      if (answer.compacted && answer.bytes) {
        const out = Buffer.from(answer.bytes);
        finish({ compacted: true, pdf: out, bytesBefore: pdf.length, bytesAfter: out.length }, true);
      } else {
        finish(unchanged(answer.error ? `failed: ${answer.error}` : (answer.reason ?? 'not compacted')), true);
      }
    };
    const onGone = () => finish(unchanged('thread ended'), false);
    const timer = setTimeout(() => finish(unchanged('timeout'), false), timeoutMs);
    worker.on('message', onMessage);
    worker.once('error', onGone);
    worker.once('exit', onGone);
    // A copy goes to the thread (transferred, not copied again): the caller keeps `pdf` to fall back on.
    const bytes = new Uint8Array(pdf).buffer as ArrayBuffer;
    const task: CompactionTask = { id, bytes };
    worker.postMessage(task, [bytes]);
  }
}
