/**
 * `GET /v1/templates/{id}/layers` lists a template's layers on a `worker_threads` thread
 * (layer-listing-worker.ts), so that parsing a template — up to 2 MB of HTML, seconds of parse5 — never
 * holds the service's thread (issue 37: /healthz waited for a large listing; docs/performance-log/2026-11-28-issue-37.md).
 *
 * Bounds (constants: the service has no setting for them):
 * - one thread, started by the first listing and kept; an idle thread does not keep the process alive;
 * - a line of at most `lineLimit` listings waiting for it (503 past it), and at most `accountLimit` of
 *   one account waiting or being listed (429 past it), so one account's listings cannot fill the line;
 * - memory: the thread's heap is capped at `memoryMb`; a listing that needs more ends the thread and
 *   answers 422 DOCUMENT_TOO_LARGE (a thread that dies otherwise, 503); the next listing starts another;
 * - time: a listing not answered within `timeoutMs` of reaching the thread has the thread terminated
 *   (504); the next listing starts another.
 * The service's values are LISTING_BOUNDS below.
 */
import type { Worker } from 'node:worker_threads';
import { startThread } from '../../shared/child-limits.js';
import { AppError } from '../../shared/errors.js';
import type { ListingAnswer, ListingTask } from './layer-listing-worker.js';
import type { LayerListing } from './template-layers.js';

export interface LayerListingOptions {
  readonly lineLimit: number;
  readonly accountLimit: number;
  readonly memoryMb: number;
  readonly timeoutMs: number;
}

/** The service's bounds. */
const LISTING_BOUNDS: LayerListingOptions = {
  // Listings are quick for a card and take seconds for the largest template (docs/performance-log/2026-11-22-to-28-service.md).
  lineLimit: 16,
  accountLimit: 2,
  // The densest 2 MB template tried fits in this, with room (docs/images.md "Where layer work runs").
  memoryMb: 512,
  timeoutMs: 20_000,
};

interface Listing {
  readonly html: string;
  readonly timeoutMs: number;
  resolve(listing: LayerListing): void;
  reject(error: Error): void;
}

interface Thread {
  readonly worker: Worker;
  running: { readonly id: number; readonly listing: Listing; readonly timer: NodeJS.Timeout } | undefined;
  readonly exited: Promise<void>;
}

/** A listing thread (layer-listing-worker.ts) with its heap cap. */
function startWorker(memoryMb: number): Worker {
  return startThread(import.meta.url, 'layer-listing-worker', { name: 'layer-listing', heapMb: memoryMb });
}

export class LayerListingPool {
  readonly #line: Listing[] = [];
  /** Listings of each account waiting or running. */
  readonly #held = new Map<string, number>();
  #thread: Thread | undefined;
  #nextId = 1;

  constructor(private readonly options: LayerListingOptions) {}

  /** The layers of `html` (template-layers.ts `listLayers`), listed on the thread for `accountId`, within `timeoutMs` of reaching it. */
  list(html: string, accountId: string, timeoutMs = this.options.timeoutMs): Promise<LayerListing> {
    const held = this.#held.get(accountId) ?? 0;
    if (held >= this.options.accountLimit) {
      return Promise.reject(
        new AppError(
          'RATE_LIMITED',
          `At most ${this.options.accountLimit} layer listings of one account run at once; retry when one has been answered.`,
          { details: { retryAfterSeconds: 1 } },
        ),
      );
    }
    if (this.#line.length >= this.options.lineLimit) {
      return Promise.reject(
        new AppError('SERVICE_UNAVAILABLE', "The server is busy listing other templates' layers; retry in a moment.", {
          details: { retryAfterSeconds: 1 },
        }),
      );
    }
    this.#held.set(accountId, held + 1);
    const release = () => {
      const left = (this.#held.get(accountId) ?? 1) - 1;
      if (left > 0) this.#held.set(accountId, left);
      else this.#held.delete(accountId);
    };
    return new Promise<LayerListing>((resolve, reject) => {
      this.#line.push({
        html,
        timeoutMs,
        resolve: (listing) => {
          release();
          resolve(listing);
        },
        reject: (error) => {
          release();
          reject(error);
        },
      });
      this.#dispatch();
    });
  }

  /** Listings waiting, and whether one is being listed. */
  stats(): { waiting: number; running: boolean } {
    return { waiting: this.#line.length, running: this.#thread?.running !== undefined };
  }

  /** Refuses the listings waiting and the running one (503) and ends the thread. */
  async close(): Promise<void> {
    const gone = () =>
      new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down; retry on another instance.', {
        details: { retryAfterSeconds: 1 },
      });
    for (const listing of this.#line.splice(0)) listing.reject(gone());
    const thread = this.#thread;
    this.#thread = undefined;
    if (!thread) return;
    const running = thread.running;
    thread.running = undefined;
    if (running) {
      clearTimeout(running.timer);
      running.listing.reject(gone());
    }
    await thread.worker.terminate();
    await thread.exited;
  }

  #dispatch(): void {
    if (this.#line.length === 0 || this.#thread?.running) return;
    const thread = (this.#thread ??= this.#startThread());
    const listing = this.#line.shift()!;
    const id = this.#nextId++;
    const timer = setTimeout(() => {
      if (thread.running?.id !== id) return;
      thread.running = undefined;
      this.#end(thread);
      listing.reject(
        new AppError(
          'RENDER_TIMEOUT',
          `The template's layers could not be listed within ${listing.timeoutMs / 1000} s; the template is too large or too deeply nested to list.`,
        ),
      );
      this.#dispatch();
    }, listing.timeoutMs);
    thread.running = { id, listing, timer };
    thread.worker.ref();
    const task: ListingTask = { id, html: listing.html };
    thread.worker.postMessage(task);
  }

  /** Takes the thread out of the pool and terminates it (its `exit` handler answers nothing: its listing was taken first). */
  #end(thread: Thread): void {
    if (this.#thread === thread) this.#thread = undefined;
    void thread.worker.terminate();
  }

  #startThread(): Thread {
    const worker = startWorker(this.options.memoryMb);
    let failure: Error | undefined;
    const thread: Thread = {
      worker,
      running: undefined,
      exited: new Promise((resolve) => worker.once('exit', () => resolve())),
    };
    worker.on('message', (answer: ListingAnswer) => {
      const running = thread.running;
      if (!running || running.id !== answer.id) return;
      clearTimeout(running.timer);
      thread.running = undefined;
      worker.unref();
      if ('error' in answer) running.listing.reject(new Error(`listing the template's layers failed: ${answer.error}`));
      else running.listing.resolve(answer.listing);
      this.#dispatch();
    });
    worker.on('error', (error: Error) => {
      failure = error;
    });
    worker.on('exit', (code) => {
      if (this.#thread === thread) this.#thread = undefined;
      const running = thread.running;
      thread.running = undefined;
      if (running) {
        clearTimeout(running.timer);
        running.listing.reject(
          (failure as NodeJS.ErrnoException | undefined)?.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? new AppError(
                'DOCUMENT_TOO_LARGE',
                `Listing this template's layers needs more than ${this.options.memoryMb} MB of memory, the most one listing may use; write the template with fewer elements.`,
                { details: { bound: 'memory', limitMb: this.options.memoryMb } },
              )
            : new AppError(
                'SERVICE_UNAVAILABLE',
                `The thread listing the template's layers stopped (${failure ? failure.message : `exit code ${code}`}); retry in a moment.`,
                { details: { retryAfterSeconds: 1 } },
              ),
        );
      }
      this.#dispatch();
    });
    return thread;
  }
}

let shared: LayerListingPool | undefined;

/** The layers of a template's HTML, listed off the service's thread (one pool per process, started by the first listing). */
export function listTemplateLayers(html: string, accountId: string): Promise<LayerListing> {
  shared ??= new LayerListingPool(LISTING_BOUNDS);
  return shared.list(html, accountId);
}

/** Ends the process's listing thread (services' close); a later listing starts it again. */
export function closeLayerListing(): Promise<void> {
  const pool = shared;
  shared = undefined;
  return pool ? pool.close() : Promise.resolve();
}
