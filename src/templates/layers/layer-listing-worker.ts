/**
 * A layer-listing thread (a `worker_threads` thread of layer-listing.ts): parses a template's HTML
 * and lists its layers (template-layers.ts), off the service's thread.
 *
 * In: `{ id, html }`. Out: `{ id, listing }`, or `{ id, error }` when the listing itself threw.
 */
import { parentPort } from 'node:worker_threads';
import { announceReady } from '../../shared/task-threads.js';
import { listLayers, type LayerListing } from './template-layers.js';

export interface ListingTask {
  readonly id: number;
  readonly html: string;
}

export type ListingAnswer =
  | { readonly id: number; readonly listing: LayerListing }
  | { readonly id: number; readonly error: string };

parentPort?.on('message', (task: ListingTask) => {
  let answer: ListingAnswer;
  try {
    answer = { id: task.id, listing: listLayers(task.html) };
  } catch (error) {
    answer = { id: task.id, error: error instanceof Error ? error.message : String(error) };
  }
  parentPort!.postMessage(answer);
});

announceReady();
