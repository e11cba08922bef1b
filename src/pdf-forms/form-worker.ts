/**
 * The form thread (a `worker_threads` thread of form-thread.ts): @libpdf/core's load, read, fill,
 * flatten and save of a form template's PDF, which would otherwise hold the event loop for as long as
 * the form is long.
 *
 * In: `{ id, task: 'read', pdf }` or `{ id, task: 'fill', pdf, values, options }` (the PDF transferred).
 * Out: `{ id, reading }`, `{ id, bytes }` (transferred) or `{ id, error }`.
 */
import { parentPort } from 'node:worker_threads';
import { announceReady } from '../shared/task-threads.js';
import { fillForm, type FillOptions, type FormValue } from './form-filling.js';
import { readForm, type FormReading } from './form-reading.js';

export type FormTask =
  | { readonly id: number; readonly task: 'read'; readonly pdf: ArrayBuffer }
  | {
      readonly id: number;
      readonly task: 'fill';
      readonly pdf: ArrayBuffer;
      readonly values: readonly FormValue[];
      readonly options: FillOptions;
    };

export type FormAnswer =
  | { readonly id: number; readonly reading: FormReading }
  | { readonly id: number; readonly bytes: ArrayBuffer }
  | { readonly id: number; readonly error: string };

function transferable(bytes: Uint8Array): ArrayBuffer {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    ? (bytes.buffer as ArrayBuffer)
    : (new Uint8Array(bytes).buffer as ArrayBuffer);
}

parentPort?.on('message', (task: FormTask) => {
  const fail = (error: unknown) =>
    parentPort!.postMessage({
      id: task.id,
      error: error instanceof Error ? error.message : String(error),
    } satisfies FormAnswer);
  if (task.task === 'read') {
    readForm(new Uint8Array(task.pdf)).then(
      (reading) => parentPort!.postMessage({ id: task.id, reading } satisfies FormAnswer),
      fail,
    );
    return;
  }
  fillForm(new Uint8Array(task.pdf), task.values, task.options).then((filled) => {
    const bytes = transferable(filled);
    parentPort!.postMessage({ id: task.id, bytes } satisfies FormAnswer, [bytes]);
  }, fail);
});

announceReady();
