/**
 * Threads of one worker module that run one task at a time each, with a deadline and a heap ceiling
 * (child-limits.ts `startThread`): the message, error, exit and out-of-memory handling every such pool
 * needs, written once. A thread starts on first use; after an answer it is kept idle (unref'd, so it
 * never holds the process open) for the next task, up to `maxIdle`. A task past its deadline has its
 * thread terminated; a thread that crashed or reached its heap ceiling is gone too; either way the
 * next task gets a fresh thread, and the process lives on. How many tasks run at once is the caller's
 * pool's business (its FairScheduler): this class runs what it is given.
 *
 * A task's thread may send messages before its answer (a request the main thread serves, as signing's
 * time-stamp): `read` sees every message and returns the answer only for the one that ends the task;
 * `post` replies to the thread, and does nothing once the task has ended.
 *
 * A task that ends other than with an answer is settled once its thread has gone.
 *
 * A task given a `signal` is stopped when it aborts (a pool shutting down): its thread is terminated.
 *
 * A task's deadline counts its own work, not a new thread's start-up (loading its modules took seconds
 * on a loaded machine): the worker module calls `announceReady()` once loaded, and a task on a new
 * thread starts its clock then.
 */
import { parentPort, type Transferable, type Worker } from 'node:worker_threads';
import { isThreadOutOfMemory, startThread } from './child-limits.js';
import { AppError } from './errors.js';

const READY = 'task-thread-ready';

/** Called by a worker module once its imports are loaded: from then on its first task's deadline runs. */
export function announceReady(): void {
  parentPort?.postMessage(READY);
}

/** How a task ended. */
export type TaskEnd<A> =
  | { readonly ended: 'answer'; readonly answer: A }
  /** Past its deadline: the thread was terminated. */
  | { readonly ended: 'timeout' }
  /** The thread reached its heap ceiling and Node ended it. */
  | { readonly ended: 'out-of-memory' }
  /** The thread failed otherwise (an uncaught error, an exit), or the pool is closed. */
  | { readonly ended: 'failed'; readonly error: unknown };

/**
 * A PDF task's answer, or its ending as the customer hears it: past its deadline or its heap ceiling,
 * PDF_TOO_COMPLEX; a thread that failed, PDF_TOOL_FAILED; each naming `what` ("Drawing the watermark")
 * and saying nothing was charged.
 */
export function pdfTaskAnswer<A>(end: TaskEnd<A>, o: { what: string; timeoutMs: number; heapMb: number }): A {
  if (end.ended === 'answer') return end.answer;
  if (end.ended === 'timeout')
    throw new AppError(
      'PDF_TOO_COMPLEX',
      `${o.what} took more than ${o.timeoutMs / 1000} s and was stopped; nothing was charged.`,
    );
  if (end.ended === 'out-of-memory')
    throw new AppError(
      'PDF_TOO_COMPLEX',
      `${o.what} needed more than ${o.heapMb} MiB of memory and was stopped; nothing was charged.`,
    );
  throw new AppError('PDF_TOOL_FAILED', `${o.what} failed; nothing was charged.`, { cause: end.error });
}

/** One task: what to send, and how to read what comes back. */
export interface ThreadTask<M, A> {
  readonly message: unknown;
  readonly transfer?: readonly Transferable[];
  readonly timeoutMs: number;
  /** Stops the task (its thread is terminated): it ends `failed` with the signal's reason. */
  readonly signal?: AbortSignal;
  /** False: the thread ends after this task instead of waiting for the next (a pool closed meanwhile). @defaultValue true */
  readonly keepThread?: boolean;
  /** The answer when `message` ends the task, or undefined for one that does not (answered through `post`). */
  read(message: M, post: (reply: unknown) => void): A | undefined;
}

export interface TaskThreadsOptions {
  /** `import.meta.url` of the module beside the worker file. */
  readonly callerUrl: string;
  /** The worker file's name without extension. */
  readonly worker: string;
  /** The threads' name (in heap snapshots and logs). */
  readonly name: string;
  readonly heapMb: number;
  /** Idle threads kept for later tasks. */
  readonly maxIdle: number;
  /** Called with each thread as it starts (tests end threads with it). */
  readonly onStart?: (worker: Worker) => void;
  /** Data every thread starts with (worker_threads' workerData), read when the thread starts. */
  readonly workerData?: () => unknown;
}

export class TaskThreads {
  readonly #idle: Worker[] = [];
  #running = 0;
  #closed = false;
  /** Bumped by restart(): a thread of an earlier generation is not kept after its task. */
  #generation = 0;
  /** Waiters for the moment no task runs. */
  #drained: (() => void)[] = [];

  constructor(private readonly options: TaskThreadsOptions) {}

  /** Threads alive now: idle ones and those running a task. */
  get threads(): number {
    return this.#idle.length + this.#running;
  }

  /** Tasks running now. */
  get running(): number {
    return this.#running;
  }

  /** Runs `task` on an idle thread or a new one; never rejects: every ending is a TaskEnd. */
  run<M, A>(task: ThreadTask<M, A>): Promise<TaskEnd<A>> {
    if (this.#closed) return Promise.resolve({ ended: 'failed', error: new Error('the threads are closed') });
    const { name } = this.options;
    const idle = this.#idle.pop();
    const worker = idle ?? this.#start();
    worker.ref();
    this.#running += 1;
    const generation = this.#generation;
    return new Promise<TaskEnd<A>>((resolve) => {
      let ended = false;
      let failure: unknown;
      const end = (result: TaskEnd<A>, keep: boolean) => {
        if (ended) return;
        ended = true;
        if (timer) clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        task.signal?.removeEventListener('abort', onAbort);
        const current = generation === this.#generation && !this.#closed;
        if (keep && task.keepThread !== false && current && this.#idle.length < this.options.maxIdle) {
          worker.unref();
          this.#idle.push(worker);
          this.#ended();
          return resolve(result);
        }
        // Resolved once the thread is gone: a thread cut off while writing a file must not write it after
        // its caller removed it, and a pool's threads never outnumber its slots.
        void worker.terminate().finally(() => {
          this.#ended();
          resolve(result);
        });
      };
      const post = (reply: unknown) => {
        if (!ended) worker.postMessage(reply);
      };
      let timer: NodeJS.Timeout | undefined;
      const startClock = () => {
        timer = setTimeout(() => end({ ended: 'timeout' }, false), task.timeoutMs);
      };
      const onMessage = (message: M) => {
        if ((message as unknown) === READY) return startClock();
        const answer = task.read(message, post);
        if (answer !== undefined) end({ ended: 'answer', answer }, true);
      };
      // 'error' comes before 'exit'; the exit ends the task with what the error said.
      const onError = (error: unknown) => {
        failure = error;
      };
      const onExit = (code: number) =>
        end(
          isThreadOutOfMemory(failure)
            ? { ended: 'out-of-memory' }
            : { ended: 'failed', error: failure ?? new Error(`exit code ${code} (the ${name} thread)`) },
          false,
        );
      const onAbort = () => end({ ended: 'failed', error: task.signal!.reason }, false);
      if (task.signal?.aborted) return onAbort();
      task.signal?.addEventListener('abort', onAbort, { once: true });
      if (idle) startClock();
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage(task.message, task.transfer as Transferable[] | undefined);
    });
  }

  /** Ends the idle threads now; a busy one ends when its task does. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#idle.splice(0).map((worker) => worker.terminate()));
  }

  /**
   * Ends the idle threads now and each busy one once its task ended; resolves once no task runs. Later
   * tasks start new threads (a pool that serves the whole process stays usable).
   */
  async restart(): Promise<void> {
    this.#generation += 1;
    await Promise.all(this.#idle.splice(0).map((worker) => worker.terminate()));
    if (this.#running > 0) await new Promise<void>((resolve) => this.#drained.push(resolve));
  }

  #ended(): void {
    this.#running -= 1;
    if (this.#running === 0) for (const resolve of this.#drained.splice(0)) resolve();
  }

  #start(): Worker {
    const { callerUrl, worker: file, name, heapMb } = this.options;
    const worker = startThread(callerUrl, file, { name, heapMb, workerData: this.options.workerData?.() });
    // An idle thread that fails is forgotten (a busy one's task hears it through its own listeners).
    worker.on('error', () => {});
    worker.once('exit', () => {
      const at = this.#idle.indexOf(worker);
      if (at >= 0) this.#idle.splice(at, 1);
    });
    this.options.onStart?.(worker);
    return worker;
  }
}
