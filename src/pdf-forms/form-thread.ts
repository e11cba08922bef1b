/**
 * Form templates' PDFs read and filled on threads (form-worker.ts), so @libpdf/core's parse and write of
 * a long form never hold the event loop: shared/task-threads.ts's threads, each task under a deadline and
 * a heap ceiling; a thread past either is ended and its task fails with PDF_TOO_COMPLEX while the process
 * lives on. Tasks take a slot of one fair pool (scheduling/fair-scheduler.ts), one per core: fills of
 * paid documents before the free reading of an uploaded form, which never holds every slot.
 */
import { availableParallelism } from 'node:os';
import { AppError } from '../shared/errors.js';
import { pdfTaskAnswer, TaskThreads } from '../shared/task-threads.js';
import { accountSlotsOf, FairScheduler, type PoolStats, type Ticket } from '../scheduling/fair-scheduler.js';
import type { FillOptions, FormValue } from './form-filling.js';
import type { FormReading } from './form-reading.js';
import type { FormAnswer, FormTask } from './form-worker.js';

/** @libpdf/core's object graph of a form within the PDF tools' byte and page bounds, with room (as for the watermark). */
const HEAP_MB = 1024;
/** Far past an honest form on a slow machine: a one-page form fills in a fraction of a second, its fonts subset included. */
const TIMEOUT_MS = 60_000;

const threads = new TaskThreads({
  callerUrl: import.meta.url,
  worker: 'form-worker',
  name: 'pdf-form',
  heapMb: HEAP_MB,
  maxIdle: Math.max(1, availableParallelism()),
});
const CAPACITY = Math.max(2, availableParallelism());
const slots = new FairScheduler({
  name: 'pdf-forms',
  limits: {
    capacity: CAPACITY,
    queueLimit: 256,
    accountSlots: accountSlotsOf(CAPACITY),
    workConserving: false,
    freeSlots: accountSlotsOf(CAPACITY),
    accountQueueLimit: 64,
    accountFreeQueueLimit: 8,
  },
  words: { task: 'form fill', freeTask: 'form reading', slot: 'form slot' },
  busy: (reason) =>
    new AppError('SERVICE_UNAVAILABLE', 'The form threads are busy; retry shortly. Nothing was charged.', {
      details: { retryAfterSeconds: 2, reason },
    }),
});
let nextId = 1;

type TaskInput =
  | { task: 'read'; pdf: Uint8Array }
  | { task: 'fill'; pdf: Uint8Array; values: readonly FormValue[]; options: FillOptions };

async function runOnThread(input: TaskInput, what: string): Promise<FormAnswer> {
  const id = nextId++;
  // A copy of exactly the bytes, transferred: the caller keeps its buffer.
  const pdf = new Uint8Array(input.pdf).buffer as ArrayBuffer;
  const message: FormTask = input.task === 'read' ? { id, task: 'read', pdf } : { ...input, id, pdf };
  const end = await threads.run<FormAnswer, FormAnswer>({
    message,
    transfer: [pdf],
    timeoutMs: TIMEOUT_MS,
    read: (answer) => (answer.id === id ? answer : undefined),
  });
  return pdfTaskAnswer(end, { what, timeoutMs: TIMEOUT_MS, heapMb: HEAP_MB });
}

/** readForm (form-reading.ts) on a thread, free work: what the form has, or why it is refused; undefined when @libpdf/core cannot parse it. */
export async function readFormOffThread(pdf: Uint8Array, accountId: string): Promise<FormReading | undefined> {
  const answer = await slots.run({ accountId, kind: 'free' }, () =>
    runOnThread({ task: 'read', pdf }, 'Reading the form'),
  );
  return 'reading' in answer ? answer.reading : undefined;
}

/** fillForm (form-filling.ts) on a thread, as `ticket`'s work (paid for a document, free for a preview): the filled PDF. */
export async function fillFormOffThread(
  pdf: Uint8Array,
  fill: { values: readonly FormValue[]; options: FillOptions; ticket: Ticket },
): Promise<Buffer> {
  const { values, options, ticket } = fill;
  const answer = await slots.run(ticket, () => runOnThread({ task: 'fill', pdf, values, options }, 'Filling the form'));
  if ('bytes' in answer) return Buffer.from(answer.bytes);
  throw new AppError('RENDER_FAILED', 'The form could not be filled; nothing was charged.', {
    cause: new Error('error' in answer ? answer.error : 'no PDF'),
  });
}

/** The form pool, for /metrics. */
export function formPoolStats(): PoolStats {
  return slots.stats();
}
