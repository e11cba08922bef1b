/**
 * Draws watermarks on `worker_threads` threads (watermark-worker.ts), so libpdf's parse and write of a
 * long PDF never hold the event loop. Threads start on first use; an idle one is kept (unref'd: it never
 * keeps the process alive) for the next mark. How many run at once is bounded by the callers' pools:
 * the after-print step runs inside a render's finishing, the tool inside its PDF-tools slot. A thread
 * past its heap ceiling is ended by Node and its mark fails with PDF_TOO_COMPLEX; the process lives on.
 */
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { isThreadOutOfMemory, startThread } from '../../shared/child-limits.js';
import { AppError, ValidationError } from '../../shared/errors.js';
import type { PreparedWatermark } from './watermark.js';
import type { WatermarkAnswer, WatermarkTask } from './watermark-worker.js';

/** A watermark thread's heap: libpdf's object graph of a PDF within the input bounds, with room (as for signing). */
const WATERMARK_HEAP_MB = 1024;
/** Idle threads kept for the next marks. */
const IDLE_THREADS = Math.max(1, availableParallelism());

const idle: Worker[] = [];
let nextId = 1;

/** `drawWatermark` (watermark.ts) on a thread: the marked PDF, or its refusal (422) or failure. */
export function drawWatermarkOffThread(
  pdf: Uint8Array,
  prepared: PreparedWatermark,
  options: { strictPages: boolean; loc: (string | number)[] },
): Promise<Buffer> {
  const id = nextId++;
  const worker =
    idle.pop() ??
    startThread(import.meta.url, 'watermark-worker', { name: 'pdf-watermark', heapMb: WATERMARK_HEAP_MB });
  worker.ref();
  const copy = new Uint8Array(pdf).buffer as ArrayBuffer;
  return new Promise<Buffer>((resolve, reject) => {
    const done = (keep: boolean) => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      if (keep && idle.length < IDLE_THREADS) {
        worker.unref();
        idle.push(worker);
      } else void worker.terminate();
    };
    const onMessage = (answer: WatermarkAnswer) => {
      if (answer.id !== id) return;
      done(true);
      if ('bytes' in answer) return resolve(Buffer.from(answer.bytes));
      if ('issues' in answer) return reject(new ValidationError(answer.issues));
      reject(
        new AppError('PDF_TOOL_FAILED', 'The watermark could not be drawn on this PDF; nothing was charged.', {
          cause: new Error(answer.error),
        }),
      );
    };
    const onError = (error: unknown) => {
      done(false);
      reject(
        isThreadOutOfMemory(error)
          ? new AppError(
              'PDF_TOO_COMPLEX',
              `Drawing the watermark needed more than ${WATERMARK_HEAP_MB} MiB of memory, the most one mark may use, and was stopped; nothing was charged.`,
            )
          : new AppError('PDF_TOOL_FAILED', 'The watermark could not be drawn on this PDF; nothing was charged.', {
              cause: error,
            }),
      );
    };
    const onExit = () => onError(new Error('the watermark thread exited'));
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    worker.postMessage(
      { id, pdf: copy, prepared, strictPages: options.strictPages, loc: options.loc } satisfies WatermarkTask,
      [copy],
    );
  });
}
