/**
 * The accessibility thread (a `worker_threads` thread of accessibility-thread.ts): pdf-lib's parse of
 * the whole PDF, the content-stream scan of every page and the structure-tree walk, which would hold
 * the event loop for as long as the file is long.
 *
 * In: `{ id, task: 'make' | 'check', pdf }` (the PDF transferred). Out: `{ id, bytes, report }` (made, transferred, and its check),
 * `{ id, report }` (checked) or `{ id, error }`.
 */
import { parentPort } from 'node:worker_threads';
import { announceReady } from '../shared/task-threads.js';
import { checkPdfUa, makePdfUa, StreamTooLargeError, type AccessibilityReport } from './pdf-ua.js';

export interface AccessibilityTask {
  readonly id: number;
  readonly task: 'make' | 'check';
  readonly pdf: ArrayBuffer;
}

export type AccessibilityAnswer =
  | { readonly id: number; readonly bytes: ArrayBuffer; readonly report: AccessibilityReport }
  | { readonly id: number; readonly report: AccessibilityReport }
  | { readonly id: number; readonly error: string; readonly encrypted?: boolean; readonly tooLarge?: boolean };

parentPort?.on('message', (message: AccessibilityTask) => {
  const pdf = new Uint8Array(message.pdf);
  const work =
    message.task === 'make'
      ? makePdfUa(pdf).then((made): AccessibilityAnswer => {
          const bytes = new Uint8Array(made.pdf).buffer as ArrayBuffer;
          return { id: message.id, bytes, report: made.report };
        })
      : checkPdfUa(pdf).then((report): AccessibilityAnswer => ({ id: message.id, report }));
  work.then(
    (answer) => parentPort!.postMessage(answer, 'bytes' in answer ? [answer.bytes] : []),
    (error: unknown) => {
      const text = error instanceof Error ? error.message : String(error);
      const encrypted = error instanceof Error && /encrypt/i.test(error.name + text);
      const tooLarge = error instanceof StreamTooLargeError;
      parentPort!.postMessage({ id: message.id, error: text, encrypted, tooLarge } satisfies AccessibilityAnswer);
    },
  );
});

announceReady();
