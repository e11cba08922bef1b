/**
 * A template thread (template-threads.ts): compiles long template sources and reads their fields, so
 * that a 2 MB template's parse (seconds of JavaScript) never holds the service's event loop. One task
 * at a time; the answer is plain data.
 */
import { parentPort } from 'node:worker_threads';
import { compileOutcome, type CompileOutcome } from '../template-language/compiler.js';
import { announceReady } from '../shared/task-threads.js';
import { inferFields, type FieldDefinition } from './field-inference.js';

/** What the thread is asked. */
export type TemplateTask =
  | { kind: 'compile'; sources: { source: string; name: string }[] }
  | { kind: 'fields'; sources: string[]; sampleData: unknown };

/** What it answers: each source's outcome, or the fields (or the syntax error that stopped reading them). */
export type TemplateAnswer =
  | { kind: 'compiled'; outcomes: CompileOutcome[] }
  | { kind: 'fields'; fields: FieldDefinition[] }
  | { kind: 'failed'; message: string; details?: Record<string, unknown>; syntax: boolean };

function answer(task: TemplateTask): TemplateAnswer {
  if (task.kind === 'compile')
    return { kind: 'compiled', outcomes: task.sources.map(({ source, name }) => compileOutcome(source, name)) };
  return { kind: 'fields', fields: inferFields(task.sources, task.sampleData) };
}

parentPort?.on('message', (task: TemplateTask) => {
  let result: TemplateAnswer;
  try {
    result = answer(task);
  } catch (error) {
    const e = error as { code?: unknown; message?: unknown; details?: Record<string, unknown> };
    result = {
      kind: 'failed',
      message: String(e?.message ?? error),
      syntax: e?.code === 'TEMPLATE_SYNTAX_ERROR',
      ...(e?.details ? { details: e.details } : {}),
    };
  }
  parentPort!.postMessage(result);
});

announceReady();
