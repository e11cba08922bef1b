/**
 * The compaction thread (a `worker_threads` thread of compaction-pool.ts): runs `compactPdf` on a copy
 * of the PDF, so its copying and zlib work never holds the event loop.
 *
 * In: `{ id, bytes }` (transferred), or `{ id, inputPath, outputPath }` for a spooled PDF: the thread
 * reads the file at offsets and writes the compacted one as it goes (`compactPdfFile`), so the event
 * loop holds neither and the thread not the whole of either.
 * Out: `{ id, compacted, reason?, bytes?, bytesBefore, bytesAfter }` (bytes transferred back; for a
 * spooled PDF, none: the result is at `outputPath`).
 */
import { parentPort } from 'node:worker_threads';
import { announceReady } from '../shared/task-threads.js';
import { compactPdf, compactPdfFile } from './pdf-compaction.js';

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
  return buffer.byteOffset === 0 && buffer.byteLength === buffer.buffer.byteLength
    ? (buffer.buffer as ArrayBuffer)
    : (new Uint8Array(buffer).buffer as ArrayBuffer);
}

parentPort?.on('message', (task: CompactionTask) => {
  let answer: CompactionAnswer;
  try {
    if ('inputPath' in task) {
      answer = { id: task.id, ...compactPdfFile(task.inputPath, task.outputPath) };
    } else {
      const input = Buffer.from(task.bytes);
      const result = compactPdf(input);
      if (result.compacted) {
        const bytes = ownArrayBuffer(result.pdf);
        answer = {
          id: task.id,
          compacted: true,
          bytes,
          bytesBefore: result.bytesBefore,
          bytesAfter: result.bytesAfter,
        };
        parentPort!.postMessage(answer, [bytes]);
        return;
      }
      answer = {
        id: task.id,
        compacted: false,
        reason: result.reason,
        bytesBefore: input.length,
        bytesAfter: input.length,
      };
    }
  } catch (error) {
    answer = {
      id: task.id,
      compacted: false,
      reason: 'failed',
      error: error instanceof Error ? error.message : String(error),
    };
  }
  parentPort!.postMessage(answer);
});

announceReady();
