/**
 * The compaction thread (a `worker_threads` thread of compaction-pool.ts): runs `compactPdf` on a copy
 * of the PDF, so its copying and zlib work never holds the event loop.
 *
 * In: `{ id, bytes }` (transferred), or `{ id, inputPath, outputPath }` for a spooled PDF: the thread
 * reads the file itself and writes the compacted one, so the event loop never holds either.
 * Out: `{ id, compacted, reason?, bytes?, bytesBefore, bytesAfter }` (bytes transferred back; for a
 * spooled PDF, none: the result is at `outputPath`).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { compactPdf } from './pdf-compaction.js';

export type CompactionTask =
  | { readonly id: number; readonly bytes: ArrayBuffer }
  | { readonly id: number; readonly inputPath: string; readonly outputPath: string };

export interface CompactionAnswer {
  readonly id: number;
  readonly compacted: boolean;
  readonly reason?: string;
  /** The compacted file, for a task given as bytes; absent when it was not compacted (the caller still has the input). */
  readonly bytes?: ArrayBuffer;
  readonly bytesBefore?: number;
  readonly bytesAfter?: number;
  readonly error?: string;
}

/** The buffer's own ArrayBuffer when it spans all of it (transferable as is), else a copy. */
function ownArrayBuffer(buffer: Buffer): ArrayBuffer {
  return buffer.byteOffset === 0 && buffer.byteLength === buffer.buffer.byteLength ? (buffer.buffer as ArrayBuffer) : (new Uint8Array(buffer).buffer as ArrayBuffer);
}

parentPort?.on('message', (task: CompactionTask) => {
  let answer: CompactionAnswer;
  try {
    const input = 'bytes' in task ? Buffer.from(task.bytes) : readFileSync(task.inputPath);
    const result = compactPdf(input);
    if (result.compacted && 'outputPath' in task) {
      writeFileSync(task.outputPath, result.pdf, { flag: 'wx', mode: 0o600 });
      answer = { id: task.id, compacted: true, bytesBefore: result.bytesBefore, bytesAfter: result.bytesAfter };
    } else if (result.compacted) {
      const bytes = ownArrayBuffer(result.pdf);
      answer = { id: task.id, compacted: true, bytes, bytesBefore: result.bytesBefore, bytesAfter: result.bytesAfter };
      parentPort!.postMessage(answer, [bytes]);
      return;
    } else {
      answer = { id: task.id, compacted: false, reason: result.reason, bytesBefore: input.length, bytesAfter: input.length };
    }
  } catch (error) {
    answer = { id: task.id, compacted: false, reason: 'failed', error: error instanceof Error ? error.message : String(error) };
  }
  parentPort!.postMessage(answer);
});
