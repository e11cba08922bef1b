/**
 * The parse worker (a `worker_threads` thread of json-parse-pool.ts): decodes a large JSON body,
 * parses it, runs the safety walk and cuts the value into small texts for the event loop
 * (json-pieces.ts). Everything costly about a large body happens here, off the event loop.
 *
 * In: `{ bytes, heapBytes }` with the body's bytes transferred (not copied). Out: `{ outcome }`.
 * `heapBytes` is what the thread may spend on the body: one whose estimate (json-heap-estimate.ts) is
 * past it is answered `tooLarge` without being parsed.
 */
import { parentPort } from 'node:worker_threads';
import type { ValidationIssue } from '../../shared/errors.js';
import { announceReady } from '../../shared/task-threads.js';
import { jsonSafetyIssues } from './json-safety.js';
import { cutJson, type JsonPiece } from './json-pieces.js';
import { jsonParseHeapEstimate } from './json-heap-estimate.js';

export interface ParseTask {
  readonly bytes: ArrayBuffer;
  readonly heapBytes: number;
}

export type ParseOutcome =
  | { readonly kind: 'empty' }
  | { readonly kind: 'parsed'; readonly piece: JsonPiece }
  /** JSON.parse's own message, as the event loop would have got it. */
  | { readonly kind: 'syntax'; readonly message: string }
  | { readonly kind: 'unsafe'; readonly issues: ValidationIssue[] };

/** What the thread answers: an outcome, or `tooLarge` (its parse would need more heap than the thread has, by the estimate), which the pool refuses. */
export type ParseAnswerOutcome = ParseOutcome | { readonly kind: 'tooLarge' };

export interface ParseAnswer {
  readonly outcome: ParseAnswerOutcome;
}

function parseBody(bytes: ArrayBuffer, heapBytes: number): ParseAnswerOutcome {
  if (jsonParseHeapEstimate(new Uint8Array(bytes)) > heapBytes) return { kind: 'tooLarge' };
  // Decoded exactly as the event loop decodes a small body (json-body-parser.ts).
  const text = Buffer.from(bytes).toString('utf8');
  if (text.trim() === '') return { kind: 'empty' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { kind: 'syntax', message: (error as Error).message };
  }
  const issues = jsonSafetyIssues(value, ['body']);
  if (issues.length > 0) return { kind: 'unsafe', issues };
  return { kind: 'parsed', piece: cutJson(text) };
}

const port = parentPort;
if (!port) throw new Error('json-parse-worker.ts runs as a worker thread (json-parse-pool.ts starts it)');
port.on('message', (task: ParseTask) => {
  const answer: ParseAnswer = { outcome: parseBody(task.bytes, task.heapBytes) };
  port.postMessage(answer);
});
announceReady();
