import { pino, type Logger } from 'pino';

export type { Logger };

/** Structured JSON logs for operators. Secrets never reach a log line: known secret paths are redacted. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'pressroom' },
      timestamp: pino.stdTimeFunctions.isoTime,
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
        ],
        censor: '[redacted]',
      },
    },
    destination,
  );
}
