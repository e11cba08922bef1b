/**
 * The application/json body parser: every JSON body is parsed, then walked for what schemas cannot
 * express (json-safety.ts: depth, NUL characters, prototype keys), with the same answers whatever its
 * size — 422 `json_invalid` for a malformed body, 422 with each problem's place for an unsafe one.
 *
 * Where the work happens depends on the body's size:
 * - up to `thresholdBytes`, on the event loop: a parse of that much takes milliseconds, less than
 *   handing the body to a thread and back;
 * - above it, on a parse thread (json-parse-pool.ts): the parse, the walk and the cutting of the text
 *   into small pieces (json-pieces.ts) happen there, and the event loop only puts the pieces together,
 *   yielding between them, so a 10 MB body delays other requests by a slice, not by a second.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ValidationError } from '../../shared/errors.js';
import { jsonSafetyIssues } from './json-safety.js';
import { joinJson } from './json-pieces.js';
import type { JsonParsePool } from './json-parse-pool.js';
import type { ParseOutcome } from './json-parse-worker.js';

export interface JsonBodyParserOptions {
  /** Bodies larger than this many bytes go to the pool. */
  readonly thresholdBytes: number;
  readonly pool: JsonParsePool;
}

/** What the error handler answers 422 `json_invalid` to (http/errors.ts), as JSON.parse threw it. */
function syntaxError(message: string): Error {
  return Object.assign(new SyntaxError(message), { statusCode: 400 });
}

/** A small body, on the event loop. */
function parseHere(bytes: Buffer): unknown {
  const text = bytes.toString('utf8');
  if (text.trim() === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw syntaxError((error as Error).message);
  }
  const issues = jsonSafetyIssues(parsed, ['body']);
  if (issues.length > 0) throw new ValidationError(issues);
  return parsed;
}

const pause = () => nextTurn();

async function fromOutcome(outcome: ParseOutcome): Promise<unknown> {
  switch (outcome.kind) {
    case 'empty':
      return undefined;
    case 'syntax':
      throw syntaxError(outcome.message);
    case 'unsafe':
      throw new ValidationError(outcome.issues);
    case 'parsed':
      return joinJson(outcome.piece, pause);
  }
}

/** The rate-limit key of a body's parse: its account, or the kind of caller for routes without one. */
function accountOf(request: FastifyRequest): string {
  return request.caller?.accountId ?? `route:${request.routeOptions.config?.auth ?? 'public'}`;
}

/** Replaces Fastify's JSON parser for every route of `app`. */
export function registerJsonBodyParser(app: FastifyInstance, options: JsonBodyParserOptions): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer;
    if (bytes.length <= options.thresholdBytes) {
      let parsed: unknown;
      try {
        parsed = parseHere(bytes);
      } catch (error) {
        return done(error as Error, undefined);
      }
      return done(null, parsed);
    }
    options.pool
      .parse(bytes, accountOf(request))
      .then(fromOutcome)
      .then(
        (parsed) => done(null, parsed),
        (error: Error) => done(error, undefined),
      );
  });
}
