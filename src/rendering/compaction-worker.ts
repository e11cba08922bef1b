/**
 * The compaction thread (a `worker_threads` thread of compaction-pool.ts): runs `compactPdf` on a copy
 * of the PDF, so its copying and zlib work never holds the event loop.
 *
 * In: `{ id, bytes }` (transferred). Out: `{ id, compacted, reason?, bytes }` (transferred back).
 */
import { parentPort } from 'node:worker_threads';
import { compactPdf } from './pdf-compaction.js';

export interface CompactionTask {
  readonly id: number;
  readonly bytes: ArrayBuffer;
}

export interface CompactionAnswer {
  readonly id: number;
  readonly compacted: boolean;
  readonly reason?: string;
  /** The compacted file; absent when it was not compacted (the caller still has the input). */
  readonly bytes?: ArrayBuffer;
  readonly error?: string;
}

parentPort?.on('message', (task: CompactionTask) => {
  let answer: CompactionAnswer;
  try {
    const result = compactPdf(Buffer.from(task.bytes));
    if (result.compacted) {
      const out = result.pdf;
      const bytes = out.byteOffset === 0 && out.byteLength === out.buffer.byteLength ? (out.buffer as ArrayBuffer) : (new Uint8Array(out).buffer as ArrayBuffer);
      answer = { id: task.id, compacted: true, bytes };
      parentPort!.postMessage(answer, [bytes]);
      return;
    }
    answer = { id: task.id, compacted: false, reason: result.reason };
  } catch (error) {
    answer = { id: task.id, compacted: false, reason: 'failed', error: error instanceof Error ? error.message : String(error) };
  }
  parentPort!.postMessage(answer);
});
