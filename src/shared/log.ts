import { AsyncLocalStorage } from 'node:async_hooks';
import { pino, type Logger } from 'pino';
import { redactUrlSecrets } from './redact-url.js';

export type { Logger };

/**
 * The request id of the work in progress: an HTTP request, or the job or webhook delivery that a
 * request started (issue 7). Every log line written inside `withRequestId` carries it as `req_id`,
 * including lines from code that never sees the request (the renderer, the ledger).
 */
const requestContext = new AsyncLocalStorage<{ requestId: string }>();

/** Runs `work` with `requestId` as the current request id (a null id runs it without one). */
export function withRequestId<T>(requestId: string | null | undefined, work: () => T): T {
  return requestId ? requestContext.run({ requestId }, work) : work();
}

/** The current request id, if any. */
export function currentRequestId(): string | undefined {
  return requestContext.getStore()?.requestId;
}

/** Adds `req_id` unless the logger already binds one (Fastify's request logger does). */
function requestIdMixin(_merge: object, _level: number, logger: Logger): object {
  const requestId = requestContext.getStore()?.requestId;
  if (!requestId) return {};
  const bindings = (logger as unknown as Record<symbol, string | undefined>)[pino.symbols.chindingsSym] ?? '';
  return bindings.includes('"req_id":') ? {} : { req_id: requestId };
}

/**
 * Structured JSON logs for operators. Secrets never reach a log line: known secret paths are redacted,
 * and so are credentials inside URLs anywhere in the line (shared/redact-url.ts) — the `signature` of a
 * download link in Fastify's `req.url`, a presigned S3 URL or a webhook URL's `token` in an error
 * message — since anyone who can read the logs could otherwise fetch the documents. The line is
 * redacted as written (`hooks.streamWrite`), so no field and no child logger can slip past it.
 */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'pressroom' },
      timestamp: pino.stdTimeFunctions.isoTime,
      mixin: requestIdMixin,
      hooks: { streamWrite: redactUrlSecrets },
      redact: {
        paths: [
          'req.headers["x-api-key"]',
          'req.headers.authorization',
          'secret_access_key',
          '*.secret_access_key',
          'webhook_secret',
          '*.webhook_secret',
          'api_key',
          '*.api_key',
          // A signing certificate's file and password (signing/certificates.ts), should a body ever be logged.
          'password',
          '*.password',
          'pkcs12_base64',
          '*.pkcs12_base64',
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
