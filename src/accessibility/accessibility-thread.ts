/**
 * PDF/UA, and the merge of tagged PDFs (merge-tagged.ts), on threads (accessibility-worker.ts), so the
 * parse of a long PDF never holds the event loop: shared/task-threads.ts's threads, each task under a
 * deadline and a heap ceiling; a thread past either is ended and its task fails with PDF_TOO_COMPLEX
 * while the process lives on. Tasks take a slot of one fair pool (scheduling/fair-scheduler.ts), one
 * per core: paid documents' steps and merges before free checks (POST /v1/pdf-tools/check-accessibility),
 * which never hold every slot.
 */
import { availableParallelism } from 'node:os';
import { AppError } from '../shared/errors.js';
import { pdfTaskAnswer, TaskThreads } from '../shared/task-threads.js';
import { accountSlotsOf, FairScheduler, type Ticket } from '../scheduling/fair-scheduler.js';
import type { AccessibilityAnswer, AccessibilityTask } from './accessibility-worker.js';
import type { AccessibilityReport } from './pdf-ua.js';

/** pdf-lib's object graph of a PDF within the input bounds, with room (as for the watermark). */
const HEAP_MB = 1024;
/** Far past an honest PDF on a slow machine: the 330-page report's 15,000-row ledger is scanned in seconds. */
const TIMEOUT_MS = 120_000;

const threads = new TaskThreads({
  callerUrl: import.meta.url,
  worker: 'accessibility-worker',
  name: 'pdf-accessibility',
  heapMb: HEAP_MB,
  maxIdle: Math.max(1, availableParallelism()),
});
const CAPACITY = Math.max(2, availableParallelism());
const slots = new FairScheduler({
  name: 'accessibility',
  limits: {
    capacity: CAPACITY,
    queueLimit: 64,
    accountSlots: accountSlotsOf(CAPACITY),
    workConserving: false,
    freeSlots: accountSlotsOf(CAPACITY),
    accountQueueLimit: 16,
    accountFreeQueueLimit: 16,
  },
  words: { task: 'accessibility task', freeTask: 'accessibility check', slot: 'accessibility slot' },
  busy: (reason) =>
    new AppError('SERVICE_UNAVAILABLE', 'The accessibility checks are busy; retry shortly. Nothing was charged.', {
      details: { retryAfterSeconds: 2, reason },
    }),
});
let nextId = 1;

const WHAT: Record<AccessibilityTask['task'], string> = {
  make: 'Making the PDF accessible (PDF/UA)',
  check: 'The accessibility check',
  merge: 'Merging the tagged PDFs',
};

/** A task's message without its id: `pdf` for make and check, `pdfs` for merge. */
type TaskInput = { task: 'make' | 'check'; pdf: Uint8Array } | { task: 'merge'; pdfs: Uint8Array[] };

function run(input: TaskInput, ticket: Ticket): Promise<AccessibilityAnswer> {
  return slots.run(ticket, () => runOnThread(input));
}

async function runOnThread(input: TaskInput): Promise<AccessibilityAnswer> {
  const id = nextId++;
  // Copies of exactly the bytes, transferred: the caller keeps its buffers.
  const copy = (pdf: Uint8Array) => new Uint8Array(pdf).buffer as ArrayBuffer;
  const message: AccessibilityTask =
    input.task === 'merge'
      ? { id, task: 'merge', pdfs: input.pdfs.map(copy) }
      : { id, task: input.task, pdf: copy(input.pdf) };
  const what = WHAT[input.task];
  const end = await threads.run<AccessibilityAnswer, AccessibilityAnswer>({
    message,
    transfer: message.task === 'merge' ? message.pdfs : [message.pdf],
    timeoutMs: TIMEOUT_MS,
    read: (answer) => (answer.id === id ? answer : undefined),
  });
  const answer = pdfTaskAnswer(end, { what, timeoutMs: TIMEOUT_MS, heapMb: HEAP_MB });
  if ('tooLarge' in answer && answer.tooLarge)
    throw new AppError(
      'PDF_TOO_COMPLEX',
      `${what} stopped: ${answer.error}, more than one page's content may hold; nothing was charged.`,
    );
  return answer;
}

/** makePdfUa (pdf-ua.ts) on a thread: the PDF/UA file and the check of it. */
export async function makePdfUaOffThread(
  pdf: Uint8Array,
  accountId: string,
): Promise<{ pdf: Buffer; report: AccessibilityReport }> {
  const answer = await run({ task: 'make', pdf }, { accountId, kind: 'paid' });
  if ('bytes' in answer) return { pdf: Buffer.from(answer.bytes), report: answer.report };
  throw new AppError('RENDER_FAILED', 'The printed PDF could not be made accessible (PDF/UA); nothing was charged.', {
    cause: new Error('error' in answer ? answer.error : 'no PDF'),
  });
}

/** checkPdfUa (pdf-ua.ts) on a thread; null when the PDF is encrypted (the caller says how to open it). */
export async function checkPdfUaOffThread(pdf: Uint8Array, ticket: Ticket): Promise<AccessibilityReport | null> {
  const answer = await run({ task: 'check', pdf }, ticket);
  if ('report' in answer) return answer.report;
  if ('encrypted' in answer && answer.encrypted) return null;
  throw new AppError('PDF_TOOL_FAILED', 'The accessibility check could not read this PDF; nothing was charged.', {
    cause: new Error('error' in answer ? answer.error : 'no report'),
  });
}

/**
 * mergeTagged (merge-tagged.ts) on a thread, paid work: the inputs' pages in order, their structure trees
 * as one; null when none of them is tagged. The inputs must be without object streams
 * (qpdf.withoutObjectStreams): pdf-lib inflates them unbounded.
 */
export async function mergeTaggedOffThread(pdfs: Uint8Array[], accountId: string): Promise<Buffer | null> {
  const answer = await run({ task: 'merge', pdfs }, { accountId, kind: 'paid' });
  if ('merged' in answer) return answer.merged && Buffer.from(answer.merged);
  throw new AppError('PDF_TOOL_FAILED', 'The tagged PDFs could not be merged; nothing was charged.', {
    cause: new Error('error' in answer ? answer.error : 'no PDF'),
  });
}
