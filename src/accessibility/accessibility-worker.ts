/**
 * The accessibility thread (a `worker_threads` thread of accessibility-thread.ts): pdf-lib's parse of
 * the whole PDF, the content-stream scan of every page and the structure-tree walk, which would hold
 * the event loop for as long as the file is long.
 *
 * In: `{ id, task: 'make' | 'check', pdf }` (the PDF transferred) or `{ id, task: 'merge', pdfs }`
 * (merge-tagged.ts). Out: `{ id, bytes, report }` (made, transferred, and its check), `{ id, report }`
 * (checked), `{ id, merged }` (transferred; null when no input was tagged) or `{ id, error }`.
 */
import { parentPort } from 'node:worker_threads';
import { announceReady } from '../shared/task-threads.js';
import { mergeTagged } from './merge-tagged.js';
import { checkPdfUa, makePdfUa, StreamTooLargeError, type AccessibilityReport } from './pdf-ua.js';

export type AccessibilityTask =
  | { readonly id: number; readonly task: 'make' | 'check'; readonly pdf: ArrayBuffer }
  | { readonly id: number; readonly task: 'merge'; readonly pdfs: ArrayBuffer[] };

export type AccessibilityAnswer =
  | { readonly id: number; readonly bytes: ArrayBuffer; readonly report: AccessibilityReport }
  | { readonly id: number; readonly report: AccessibilityReport }
  /** null: no input was tagged. */
  | { readonly id: number; readonly merged: ArrayBuffer | null }
  | { readonly id: number; readonly error: string; readonly encrypted?: boolean; readonly tooLarge?: boolean };

/** A copy of exactly the bytes (a Uint8Array may view part of a larger buffer), to transfer. */
const own = (bytes: Uint8Array) => new Uint8Array(bytes).buffer as ArrayBuffer;

function work(message: AccessibilityTask): Promise<AccessibilityAnswer> {
  const { id } = message;
  if (message.task === 'merge')
    return mergeTagged(message.pdfs.map((pdf) => new Uint8Array(pdf))).then((merged) => ({
      id,
      merged: merged && own(merged),
    }));
  const pdf = new Uint8Array(message.pdf);
  return message.task === 'make'
    ? makePdfUa(pdf).then((made) => ({ id, bytes: own(made.pdf), report: made.report }))
    : checkPdfUa(pdf).then((report) => ({ id, report }));
}

parentPort?.on('message', (message: AccessibilityTask) => {
  work(message).then(
    (answer) =>
      parentPort!.postMessage(
        answer,
        'bytes' in answer ? [answer.bytes] : 'merged' in answer && answer.merged ? [answer.merged] : [],
      ),
    (error: unknown) => {
      const text = error instanceof Error ? error.message : String(error);
      const encrypted = error instanceof Error && /encrypt/i.test(error.name + text);
      const tooLarge = error instanceof StreamTooLargeError;
      parentPort!.postMessage({ id: message.id, error: text, encrypted, tooLarge } satisfies AccessibilityAnswer);
    },
  );
});

announceReady();
