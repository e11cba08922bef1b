/**
 * `GET /v1/templates/{id}/layers` lists a template's layers on a `worker_threads` thread
 * (layer-listing-worker.ts), so that parsing a template — up to 2 MB of HTML, seconds of parse5 — never
 * holds the service's thread (issue 37: /healthz waited for a large listing; docs/performance-log/2026-11-28-issue-37.md).
 *
 * Bounds (constants: the service has no setting for them):
 * - one thread (shared/task-threads.ts), started by the first listing and kept; an idle thread does not
 *   keep the process alive; its line is the one scheduler's (scheduling/fair-scheduler.ts): at most
 *   `lineLimit` listings waiting (503 past it), and at most `accountLimit` of one account waiting or
 *   being listed (429 past it), so one account's listings cannot fill the line;
 * - memory: the thread's heap is capped at `memoryMb`; a listing that needs more ends the thread and
 *   answers 422 DOCUMENT_TOO_LARGE (a thread that dies otherwise, 503); the next listing starts another;
 * - time: a listing not answered within `timeoutMs` of reaching the thread has the thread terminated
 *   (504); the next listing starts another.
 * The service's values are LISTING_BOUNDS below.
 */
import { AppError } from '../../shared/errors.js';
import { TaskThreads } from '../../shared/task-threads.js';
import { FairScheduler } from '../../scheduling/fair-scheduler.js';
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

const shuttingDown = () =>
  new AppError('SERVICE_UNAVAILABLE', 'The server is shutting down; retry on another instance.', {
    details: { retryAfterSeconds: 1 },
  });

export class LayerListingPool {
  readonly #threads: TaskThreads;
  readonly #slots: FairScheduler;
  readonly #closing = new AbortController();
  #nextId = 1;

  constructor(private readonly options: LayerListingOptions) {
    this.#threads = new TaskThreads({
      callerUrl: import.meta.url,
      worker: 'layer-listing-worker',
      name: 'layer-listing',
      heapMb: options.memoryMb,
      maxIdle: 1,
    });
    this.#slots = new FairScheduler({
      name: 'layer-listing',
      // One thread; an account's share counts its running listing too, so it may wait with one less.
      limits: {
        capacity: 1,
        queueLimit: options.lineLimit,
        accountSlots: 1,
        workConserving: true,
        freeSlots: 1,
        accountQueueLimit: options.accountLimit - 1,
        accountFreeQueueLimit: options.accountLimit - 1,
      },
      words: { task: 'layer listing', slot: 'layer-listing thread' },
      busy: () =>
        new AppError('SERVICE_UNAVAILABLE', "The server is busy listing other templates' layers; retry in a moment.", {
          details: { retryAfterSeconds: 1 },
        }),
    });
  }

  /** The layers of `html` (template-layers.ts `listLayers`), listed on the thread for `accountId`, within `timeoutMs` of reaching it. */
  list(html: string, accountId: string, timeoutMs = this.options.timeoutMs): Promise<LayerListing> {
    if (this.#closing.signal.aborted) return Promise.reject(shuttingDown());
    return this.#slots.run({ accountId, kind: 'free' }, () => this.#list(html, timeoutMs), {
      signal: this.#closing.signal,
    });
  }

  /** Listings waiting, and whether one is being listed. */
  stats(): { waiting: number; running: boolean } {
    const { active, waiting } = this.#slots.stats();
    return { waiting, running: active > 0 };
  }

  /** Refuses the listings waiting and the running one (503) and ends the thread. */
  async close(): Promise<void> {
    this.#closing.abort(shuttingDown());
    await this.#threads.close();
  }

  async #list(html: string, timeoutMs: number): Promise<LayerListing> {
    const id = this.#nextId++;
    const end = await this.#threads.run<ListingAnswer, ListingAnswer>({
      message: { id, html } satisfies ListingTask,
      timeoutMs,
      signal: this.#closing.signal,
      read: (answer) => (answer.id === id ? answer : undefined),
    });
    if (end.ended === 'timeout') {
      throw new AppError(
        'RENDER_TIMEOUT',
        `The template's layers could not be listed within ${timeoutMs / 1000} s; the template is too large or too deeply nested to list.`,
      );
    }
    if (end.ended === 'out-of-memory') {
      throw new AppError(
        'DOCUMENT_TOO_LARGE',
        `Listing this template's layers needs more than ${this.options.memoryMb} MB of memory, the most one listing may use; write the template with fewer elements.`,
        { details: { bound: 'memory', limitMb: this.options.memoryMb } },
      );
    }
    if (end.ended === 'failed') {
      if (this.#closing.signal.aborted) throw shuttingDown();
      const reason = end.error instanceof Error ? end.error.message : String(end.error);
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        `The thread listing the template's layers stopped (${reason}); retry in a moment.`,
        { details: { retryAfterSeconds: 1 } },
      );
    }
    if ('error' in end.answer) throw new Error(`listing the template's layers failed: ${end.answer.error}`);
    return end.answer.listing;
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
