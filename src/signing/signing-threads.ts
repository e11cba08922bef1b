/**
 * The threads signatures are made on (signing-worker.ts), one per signing slot at most, started on
 * first use and kept: libpdf's parse and write of a long PDF held the event loop for a few hundred
 * milliseconds (docs/performance-log/2026-11-28-signing.md). The caller holds a slot of the signing
 * pool (sign.ts) while a thread works, so there are never more busy threads than slots. A time-stamp
 * the thread asks for is fetched here, through the guarded TimestampAuthority (tsa.ts), and handed
 * back. A thread that dies (its heap ceiling, a crash) fails its signature and is not reused.
 */
import type { Worker } from 'node:worker_threads';
import type { TimestampAuthority } from '@libpdf/core';
import { isThreadOutOfMemory, startThread } from '../shared/child-limits.js';
import { AppError, ValidationError } from '../shared/errors.js';
import type { SignTask, ThreadMessage, TimestampAnswer } from './signing-worker.js';

/** A signing thread's heap ceiling: libpdf's object graph of a PDF within the document byte bound, with room. */
const SIGNING_HEAP_MB = 1024;

/** What a signature on a thread needs besides its task: where refusals point, and the TSA. */
export interface ThreadSignature {
  loc: (string | number)[];
  tsa: TimestampAuthority | null;
}

export class SigningThreads {
  readonly #idle: Worker[] = [];
  #nextId = 1;
  #closed = false;

  /** The signed PDF; the caller holds a signing slot. */
  sign(task: Omit<SignTask, 'id'>, context: ThreadSignature): Promise<Buffer> {
    if (this.#closed)
      return Promise.reject(
        new AppError('SERVICE_UNAVAILABLE', 'The service is shutting down; retry shortly. Nothing was charged.'),
      );
    const id = this.#nextId++;
    const worker =
      this.#idle.pop() ??
      startThread(import.meta.url, 'signing-worker', { name: 'pdf-signing', heapMb: SIGNING_HEAP_MB });
    return new Promise<Buffer>((resolve, reject) => {
      let tsaError: unknown;
      const done = (keep: boolean) => {
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
        if (keep && !this.#closed) this.#idle.push(worker);
        else void worker.terminate();
      };
      const onMessage = (message: ThreadMessage) => {
        if (message.id !== id) return;
        if (message.kind === 'timestamp') {
          context.tsa!.timestamp(message.digest, message.algorithm).then(
            (token) => worker.postMessage({ id, kind: 'token', token } satisfies TimestampAnswer),
            (error: unknown) => {
              tsaError = error;
              worker.postMessage({
                id,
                kind: 'tsa-error',
                message: error instanceof Error ? error.message : String(error),
              } satisfies TimestampAnswer);
            },
          );
          return;
        }
        done(true);
        if (message.kind === 'signed') return resolve(Buffer.from(message.bytes));
        if (message.reason === 'page_out_of_range')
          return reject(
            new ValidationError([
              { loc: [...context.loc, 'visible', 'page'], msg: message.message, type: 'page_out_of_range' },
            ]),
          );
        if (message.reason === 'tsa' && tsaError) return reject(tsaError);
        const what = message.reason === 'unreadable' ? 'read for signing' : 'signed';
        reject(
          new AppError('SIGNING_FAILED', `The PDF could not be ${what}; nothing was charged.`, {
            cause: new Error(message.message),
          }),
        );
      };
      const onError = (error: unknown) => {
        done(false);
        reject(
          isThreadOutOfMemory(error)
            ? new AppError(
                'PDF_TOO_COMPLEX',
                `Signing the PDF needed more than ${SIGNING_HEAP_MB} MiB of memory, the most one signature may use, and was stopped; nothing was charged.`,
              )
            : new AppError('SIGNING_FAILED', 'The PDF could not be signed; nothing was charged.', { cause: error }),
        );
      };
      const onExit = () => onError(new Error('the signing thread exited'));
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage({ ...task, id } satisfies SignTask, [task.pdf, task.p12]);
    });
  }

  /** Ends the idle threads; busy ones end when their signature does. */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#idle.splice(0).map((worker) => worker.terminate()));
  }
}
