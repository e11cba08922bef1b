/**
 * The threads signatures are made on (signing-worker.ts), one per signing slot at most, started on
 * first use and kept: libpdf's parse and write of a long PDF held the event loop for a few hundred
 * milliseconds (docs/performance-log/2026-11-28-signing.md), and a PKCS#12's password hashing for as
 * long as the file asks (issue 49). The caller holds a slot of the signing pool (signing-pool.ts)
 * while a thread works, so there are never more busy threads than slots. Each task has a deadline:
 * past it the thread is ended and the task fails with SIGNING_TIMEOUT. A time-stamp the thread asks
 * for is fetched here, through the guarded TimestampAuthority (tsa.ts), and handed back. A thread that
 * dies (its heap ceiling, a crash) fails its task and is not reused (shared/task-threads.ts).
 */
import type { TimestampAuthority } from '@libpdf/core';
import { AppError, ValidationError } from '../shared/errors.js';
import { TaskThreads, type TaskEnd } from '../shared/task-threads.js';
import { Pkcs12Refusal } from './pkcs12.js';
import type { OpenTask, SignTask, ThreadMessage, TimestampAnswer } from './signing-worker.js';

/** A signing thread's heap ceiling: libpdf's object graph of a PDF within the document byte bound, with room. */
const SIGNING_HEAP_MB = 1024;

/** What a signature on a thread needs besides its task: where refusals point, and the TSA. */
export interface ThreadSignature {
  loc: (string | number)[];
  tsa: TimestampAuthority | null;
}

/** What a thread answered at the end of a task. */
type Final = Exclude<ThreadMessage, { kind: 'timestamp' }>;

export class SigningThreads {
  readonly #threads: TaskThreads;
  readonly #timeoutMs: number;
  #nextId = 1;

  /** `slots`: threads kept idle (the pool's size); `timeoutMs`: each task's deadline. */
  constructor(options: { slots: number; timeoutMs: number }) {
    this.#threads = new TaskThreads({
      callerUrl: import.meta.url,
      worker: 'signing-worker',
      name: 'pdf-signing',
      heapMb: SIGNING_HEAP_MB,
      maxIdle: options.slots,
    });
    this.#timeoutMs = options.timeoutMs;
  }

  /** The signed PDF; the caller holds a signing slot. */
  async sign(task: Omit<SignTask, 'id' | 'kind'>, context: ThreadSignature): Promise<Buffer> {
    let tsaError: unknown;
    const id = this.#nextId++;
    const end = await this.#threads.run<ThreadMessage, Final>({
      message: { ...task, id, kind: 'sign' } satisfies SignTask,
      transfer: [task.pdf, task.p12],
      timeoutMs: this.#timeoutMs,
      read: (message, post) => {
        if (message.kind !== 'timestamp') return message;
        context.tsa!.timestamp(message.digest, message.algorithm).then(
          (token) => post({ id, kind: 'token', token } satisfies TimestampAnswer),
          (error: unknown) => {
            tsaError = error;
            post({
              id,
              kind: 'tsa-error',
              message: error instanceof Error ? error.message : String(error),
            } satisfies TimestampAnswer);
          },
        );
        return undefined;
      },
    });
    const answer = this.#answerOf(end, {
      doing: 'Signing the PDF',
      failed: 'The PDF could not be signed',
      outcome: 'nothing was charged',
    });
    if (answer.kind === 'signed') return Buffer.from(answer.bytes);
    if (answer.kind === 'refused')
      throw new ValidationError([
        { loc: [...context.loc, 'certificate'], msg: `${answer.message}. Nothing was charged`, type: answer.type },
      ]);
    if (answer.kind !== 'failed')
      throw new AppError('SIGNING_FAILED', 'The PDF could not be signed; nothing was charged.');
    if (answer.reason === 'page_out_of_range')
      throw new ValidationError([
        { loc: [...context.loc, 'visible', 'page'], msg: answer.message, type: 'page_out_of_range' },
      ]);
    if (answer.reason === 'tsa' && tsaError) throw tsaError;
    const what = answer.reason === 'unreadable' ? 'read for signing' : 'signed';
    throw new AppError('SIGNING_FAILED', `The PDF could not be ${what}; nothing was charged.`, {
      cause: new Error(answer.message),
    });
  }

  /** The certificate (DER) of an uploaded PKCS#12 opened with its password and checked (pkcs12.ts); throws Pkcs12Refusal. */
  async open(p12: Uint8Array, password: string): Promise<Uint8Array> {
    const copy = new Uint8Array(p12).buffer as ArrayBuffer;
    const end = await this.#threads.run<ThreadMessage, Final>({
      message: { id: this.#nextId++, kind: 'open', p12: copy, password } satisfies OpenTask,
      transfer: [copy],
      timeoutMs: this.#timeoutMs,
      read: (message) => (message.kind === 'timestamp' ? undefined : message),
    });
    const answer = this.#answerOf(end, {
      doing: 'Opening the PKCS#12 file',
      failed: 'The PKCS#12 file could not be opened',
      outcome: 'nothing was stored',
    });
    if (answer.kind === 'opened') return answer.certificate;
    if (answer.kind === 'refused') throw new Pkcs12Refusal(answer.type, answer.message);
    throw new Pkcs12Refusal(
      'pkcs12_invalid',
      `The PKCS#12 file could not be read: ${answer.kind === 'failed' ? answer.message : 'no answer'}`,
    );
  }

  /** Ends the idle threads; busy ones end when their task does. */
  close(): Promise<void> {
    return this.#threads.close();
  }

  /** The thread's answer, or the coded error of a task that ran out of time or memory. */
  #answerOf(end: TaskEnd<Final>, words: { doing: string; failed: string; outcome: string }): Final {
    if (end.ended === 'answer') return end.answer;
    if (end.ended === 'timeout')
      throw new AppError(
        'SIGNING_TIMEOUT',
        `${words.doing} took longer than ${this.#timeoutMs / 1000} s and was stopped; ${words.outcome}.`,
      );
    if (end.ended === 'out-of-memory')
      throw new AppError(
        'PDF_TOO_COMPLEX',
        `${words.doing} needed more than ${SIGNING_HEAP_MB} MiB of memory, the most one signing task may use, and was stopped; ${words.outcome}.`,
      );
    throw new AppError('SIGNING_FAILED', `${words.failed}; ${words.outcome}.`, { cause: end.error });
  }
}
