/**
 * Draws watermarks on `worker_threads` threads (watermark-worker.ts), so libpdf's parse and write of a
 * long PDF never hold the event loop. The threads are shared/task-threads.ts's: started on first use,
 * an idle one kept for the next mark, each mark under a deadline and a heap ceiling; a thread past
 * either is ended and its mark fails with PDF_TOO_COMPLEX, and the process lives on. How many run at
 * once is bounded by the callers' pools: the after-print step runs inside a render's finishing, the
 * tool inside its PDF-tools slot.
 */
import { availableParallelism } from 'node:os';
import { AppError, ValidationError } from '../../shared/errors.js';
import { pdfTaskAnswer, TaskThreads } from '../../shared/task-threads.js';
import type { PreparedWatermark } from './watermark.js';
import type { WatermarkAnswer, WatermarkTask } from './watermark-worker.js';

/** A watermark thread's heap: libpdf's object graph of a PDF within the input bounds, with room (as for signing). */
const WATERMARK_HEAP_MB = 1024;
/** A mark's deadline: 2,000 pages took 0.8 s (watermark-worker.ts), so this is far past any honest PDF on a slow machine. */
const WATERMARK_TIMEOUT_MS = 60_000;

const threads = new TaskThreads({
  callerUrl: import.meta.url,
  worker: 'watermark-worker',
  name: 'pdf-watermark',
  heapMb: WATERMARK_HEAP_MB,
  maxIdle: Math.max(1, availableParallelism()),
});
let nextId = 1;

/** `drawWatermark` (watermark.ts) on a thread: the marked PDF, or its refusal (422) or failure. */
export async function drawWatermarkOffThread(
  pdf: Uint8Array,
  prepared: PreparedWatermark,
  options: { strictPages: boolean; loc: (string | number)[] },
): Promise<Buffer> {
  const id = nextId++;
  const copy = new Uint8Array(pdf).buffer as ArrayBuffer;
  const end = await threads.run<WatermarkAnswer, WatermarkAnswer>({
    message: { id, pdf: copy, prepared, strictPages: options.strictPages, loc: options.loc } satisfies WatermarkTask,
    transfer: [copy],
    timeoutMs: WATERMARK_TIMEOUT_MS,
    read: (answer) => (answer.id === id ? answer : undefined),
  });
  const answer = pdfTaskAnswer(end, {
    what: 'Drawing the watermark',
    timeoutMs: WATERMARK_TIMEOUT_MS,
    heapMb: WATERMARK_HEAP_MB,
  });
  if ('bytes' in answer) return Buffer.from(answer.bytes);
  if ('issues' in answer) throw new ValidationError(answer.issues);
  throw new AppError('PDF_TOOL_FAILED', 'The watermark could not be drawn on this PDF; nothing was charged.', {
    cause: new Error(answer.error),
  });
}
