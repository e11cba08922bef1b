/**
 * Long templates compiled and read off the event loop (issue 49; HARDENING, "the event loop"): a 2 MB
 * template of tags took 6.5 s of JavaScript to compile and 2.7 s more to read its fields, free at
 * every save, and the whole service waited. A source up to INLINE_TEMPLATE_CHARS is compiled where it
 * is asked (milliseconds at worst); a longer one on a template thread (template-worker.ts), the
 * threads shared between accounts by the one scheduler, each task under a deadline and a heap
 * ceiling. What a thread compiled goes into the compiler's cache, so the compile that follows is a
 * lookup.
 */
import { AppError } from '../shared/errors.js';
import { TaskThreads, type TaskEnd } from '../shared/task-threads.js';
import { accountSlotsOf, FairScheduler, type PoolStats, type Ticket } from '../scheduling/fair-scheduler.js';
import { isCompiled, rememberCompiled } from '../template-language/compiler.js';
import { inferFields, type FieldDefinition } from './field-inference.js';
import type { TemplateAnswer, TemplateTask } from './template-worker.js';

/** Longest source compiled on the caller's thread: at most a few milliseconds of parsing, however it is written. */
export const INLINE_TEMPLATE_CHARS = 32 * 1024;
const THREADS = 2;
/** The longest template (2,000,000 characters) of the costliest shape took 9 s on a loaded 2-core machine. */
const TASK_TIMEOUT_MS = 60_000;
const HEAP_MB = 768;
const QUEUE_LIMIT = 64;

export interface TemplateThreads {
  /** Compiles each long source not compiled lately, on a thread; compileTemplate then answers from its cache. */
  prepare(ticket: Ticket, sources: readonly (string | null | undefined)[]): Promise<void>;
  /** The fields of the sources (field-inference.ts), read on a thread when one is long. */
  inferFields(ticket: Ticket, sources: string[], sampleData: unknown): Promise<FieldDefinition[]>;
  stats(): PoolStats;
  close(): Promise<void>;
}

export function createTemplateThreads(): TemplateThreads {
  const threads = new TaskThreads({
    callerUrl: import.meta.url,
    worker: 'template-worker',
    name: 'template-checks',
    heapMb: HEAP_MB,
    maxIdle: THREADS,
  });
  const share = accountSlotsOf(THREADS);
  const slots = new FairScheduler({
    name: 'templates',
    limits: {
      capacity: THREADS,
      queueLimit: QUEUE_LIMIT,
      accountSlots: share,
      workConserving: true,
      freeSlots: THREADS,
      accountQueueLimit: QUEUE_LIMIT / 4,
      accountFreeQueueLimit: QUEUE_LIMIT / 4,
    },
    words: { task: 'template check', slot: 'template thread' },
    busy: (reason) =>
      new AppError(
        'SERVICE_UNAVAILABLE',
        'Long templates are being checked for other requests; retry shortly. Nothing was saved or charged.',
        { details: { retryAfterSeconds: 2, reason } },
      ),
  });
  const run = (ticket: Ticket, task: TemplateTask): Promise<TemplateAnswer> =>
    slots.run(ticket, async () =>
      answerOf(
        await threads.run<TemplateAnswer, TemplateAnswer>({
          message: task,
          timeoutMs: TASK_TIMEOUT_MS,
          read: (answer) => answer,
        }),
      ),
    );

  return {
    async prepare(ticket, sources) {
      const long = [
        ...new Set(
          sources.filter(
            (s): s is string => typeof s === 'string' && s.length > INLINE_TEMPLATE_CHARS && !isCompiled(s),
          ),
        ),
      ];
      if (long.length === 0) return;
      const answer = await run(ticket, {
        kind: 'compile',
        sources: long.map((source) => ({ source, name: 'template' })),
      });
      if (answer.kind !== 'compiled') throw failure(answer);
      long.forEach((source, i) => rememberCompiled(source, answer.outcomes[i]!));
    },
    async inferFields(ticket, sources, sampleData) {
      if (!sources.some((s) => s.length > INLINE_TEMPLATE_CHARS)) return inferFields(sources, sampleData);
      const answer = await run(ticket, { kind: 'fields', sources, sampleData });
      if (answer.kind !== 'fields') throw failure(answer);
      return answer.fields;
    },
    stats: () => slots.stats(),
    close: () => threads.close(),
  };
}

/** The thread's answer, or the refusal that says why there is none. */
function answerOf(end: TaskEnd<TemplateAnswer>): TemplateAnswer {
  if (end.ended === 'answer') return end.answer;
  const why =
    end.ended === 'timeout'
      ? `took more than ${TASK_TIMEOUT_MS / 1000} s to read`
      : end.ended === 'out-of-memory'
        ? 'needs too much memory to read'
        : 'could not be read';
  return {
    kind: 'failed',
    syntax: end.ended !== 'failed',
    message: `The template ${why}: make it shorter, or write repeated markup once inside a loop`,
  };
}

function failure(answer: TemplateAnswer): AppError {
  if (answer.kind !== 'failed') return new AppError('RENDER_FAILED', 'The template could not be read');
  return new AppError(
    answer.syntax ? 'TEMPLATE_SYNTAX_ERROR' : 'RENDER_FAILED',
    answer.message,
    answer.details ? { details: answer.details } : {},
  );
}
