/**
 * The watermark thread (a `worker_threads` thread of watermark-thread.ts): libpdf's load, drawing and
 * save of the whole PDF, which held the event loop for 0.2 s on a 300-page document and 0.8 s on a
 * 2000-page one (docs/performance-log.md, 2026-11-28).
 *
 * In: `{ id, pdf, prepared, strictPages, loc }` (the PDF transferred). Out: `{ id, bytes }` (transferred)
 * or `{ id, issues }` (a refusal: the validation issues to throw again) or `{ id, error }`.
 */
import { parentPort } from 'node:worker_threads';
import { ValidationError } from '../../shared/errors.js';
import { announceReady } from '../../shared/task-threads.js';
import { drawWatermark, type PreparedWatermark } from './watermark.js';

export interface WatermarkTask {
  readonly id: number;
  readonly pdf: ArrayBuffer;
  readonly prepared: PreparedWatermark;
  readonly strictPages: boolean;
  readonly loc: (string | number)[];
}

export type WatermarkAnswer =
  | { readonly id: number; readonly bytes: ArrayBuffer }
  | { readonly id: number; readonly issues: ValidationError['issues'] }
  | { readonly id: number; readonly error: string };

parentPort?.on('message', (task: WatermarkTask) => {
  drawWatermark(new Uint8Array(task.pdf), task.prepared, { strictPages: task.strictPages, loc: task.loc }).then(
    (marked) => {
      const bytes =
        marked.byteOffset === 0 && marked.byteLength === marked.buffer.byteLength
          ? (marked.buffer as ArrayBuffer)
          : (new Uint8Array(marked).buffer as ArrayBuffer);
      parentPort!.postMessage({ id: task.id, bytes } satisfies WatermarkAnswer, [bytes]);
    },
    (error: unknown) => {
      const answer: WatermarkAnswer =
        error instanceof ValidationError
          ? { id: task.id, issues: error.issues }
          : { id: task.id, error: error instanceof Error ? error.message : String(error) };
      parentPort!.postMessage(answer);
    },
  );
});

announceReady();
