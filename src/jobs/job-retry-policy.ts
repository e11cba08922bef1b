/**
 * What a failed job attempt means. Transient failures (the browser crashed or was busy, storage or the
 * database timed out) are retried with backoff; everything else is permanent: the same request would
 * fail the same way, so the job ends `failed` at once and its credit is refunded (docs/jobs.md).
 */
import { isDatabaseUnavailable } from '../db/retryable-errors.js';
import { AppError, ValidationError, type ErrorCode } from '../shared/errors.js';

/** Codes that say "try again later", not "this request is wrong". */
export const TRANSIENT_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'RENDERER_BUSY',
  // From a fair pool (scheduling/fair-scheduler.ts): too many of the account's tasks waiting, or its
  // failure budget spent. The job is paid for; it waits its turn again later.
  'RATE_LIMITED',
  'RENDER_FAILED',
  'RENDER_TIMEOUT',
  'STORAGE_ERROR',
  'S3_UPLOAD_FAILED',
  'SERVICE_UNAVAILABLE',
  // A time-stamp authority down or slow now may answer on a later attempt (signing/tsa.ts).
  'TSA_FAILED',
  'INTERNAL_ERROR',
]);

/**
 * Transient codes that the document itself may be causing (a page that never finishes, a script that
 * takes its renderer down): one retry covers a crash or an overload that happened to hit the job; a
 * second such failure fails it, so one bad document cannot hold a render slot for `maxAttempts` full
 * render timeouts (its credit is refunded either way).
 */
export const DOCUMENT_SUSPECT_CODES: ReadonlySet<ErrorCode> = new Set<ErrorCode>(['RENDER_TIMEOUT', 'RENDER_FAILED']);
export const DOCUMENT_SUSPECT_MAX_ATTEMPTS = 2;

/** A failed attempt as the job row records it; `message` is safe to show the customer. */
export interface AttemptFailure {
  transient: boolean;
  /** A lower attempt limit than the configured one for this kind of failure. */
  maxAttempts?: number;
  code: string;
  message: string;
  /** Operator detail for `last_error` and the log (may name internals, never secrets). */
  detail: string;
}

/** Sorts an error thrown by an attempt into transient or permanent. */
export function classifyFailure(error: unknown): AttemptFailure {
  if (error instanceof ValidationError) {
    return { transient: false, code: 'INVALID_REQUEST', message: error.message, detail: error.message };
  }
  if (error instanceof AppError) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    const failure: AttemptFailure = {
      transient: TRANSIENT_CODES.has(error.code),
      code: error.code,
      message: error.message,
      detail: `${error.code}: ${error.message}${cause}`,
    };
    if (DOCUMENT_SUSPECT_CODES.has(error.code)) failure.maxAttempts = DOCUMENT_SUSPECT_MAX_ATTEMPTS;
    return failure;
  }
  // Not one of ours: a database that is unavailable for now (db/retryable-errors.ts), or else probably
  // a bug. Both are retried: the first passes by itself, and for the second retrying is safe (the job is
  // idempotent) and the attempt limit bounds it. The customer sees a generic message, the operator the
  // real one, labelled when it is the database.
  const cause = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const detail = isDatabaseUnavailable(error) ? `database unavailable: ${cause}` : cause;
  return {
    transient: true,
    code: 'INTERNAL_ERROR',
    message: 'An internal error occurred while generating the document.',
    detail,
  };
}

/** First retry delay after a transient failure, doubled per attempt with jitter: a restarting dependency is back by then. */
export const JOB_RETRY_BASE_DELAY_MS = 2000;

/**
 * Delay before the retry that follows attempt `attempt` (1-based): `base · 2^(attempt−1)`, then "equal
 * jitter" (half fixed, half random) so retries of jobs that failed together spread out, capped at 10 min.
 */
export function jobRetryDelayMs(attempt: number, baseDelayMs: number, random: () => number = Math.random): number {
  const exponential = Math.min(baseDelayMs * 2 ** Math.max(0, attempt - 1), 10 * 60_000);
  return Math.round(exponential / 2 + random() * (exponential / 2));
}
