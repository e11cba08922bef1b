/**
 * The one table of database conditions that mean "the database is unavailable for now", as opposed to
 * "this query is wrong": the server is restarting, refusing connections, full, or dropped ours. They
 * pass by themselves, so the caller should retry. http/errors.ts answers them 503 with Retry-After;
 * jobs/job-retry-policy.ts retries the attempt.
 *
 * Three kinds of evidence, because node-postgres reports the same outage in different ways depending
 * on when it hits: a SQLSTATE from the server, a Node socket code, or a plain Error with only a message.
 * SQLite has no entry: it is a file opened by this process, not a server that can go away.
 */

/** PostgreSQL SQLSTATEs of an unavailable server (the error's `code`). */
const POSTGRES_CODES: Readonly<Record<string, string>> = {
  '57P01': 'admin_shutdown: the server is stopping or restarting and ended the session',
  '57P02': 'crash_shutdown: another server process crashed and the server is resetting',
  '57P03': 'cannot_connect_now: the server is starting up, shutting down or in recovery',
  '53300': 'too_many_connections: max_connections is reached',
  '08001': 'sqlclient_unable_to_establish_sqlconnection',
  '08003': 'connection_does_not_exist',
  '08006': 'connection_failure',
};

/** Node socket codes on the connection to the server (the error's `code`). */
const SOCKET_CODES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'nothing listens on the port: the server is down or restarting',
  ECONNRESET: 'the server or the network dropped the connection',
};

/** Messages of errors that carry no code (node-postgres and its pool), matched case-insensitively. */
const MESSAGE_PATTERNS: readonly { pattern: RegExp; meaning: string }[] = [
  {
    pattern: /Connection terminated/i,
    meaning: 'the socket closed under a query ("… unexpectedly", "… due to connection timeout")',
  },
  {
    pattern: /timeout exceeded when trying to connect/i,
    meaning: 'the pool got no connection within connectionTimeoutMillis',
  },
  { pattern: /is not queryable/i, meaning: 'a checked-out client whose connection already failed (see openDatabase)' },
  {
    pattern: /terminating connection/i,
    meaning: 'the server ended the session (admin shutdown, crash of another backend)',
  },
  {
    pattern: /the database system is (starting up|shutting down)/i,
    meaning: 'the server accepts no sessions yet or any more',
  },
];

/** Whether `error` says the database is unavailable for now (see the tables above), so retrying later should work. */
export function isDatabaseUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  if (typeof code === 'string' && (Object.hasOwn(POSTGRES_CODES, code) || Object.hasOwn(SOCKET_CODES, code)))
    return true;
  const message = String((error as { message?: unknown } | null | undefined)?.message ?? '');
  return MESSAGE_PATTERNS.some(({ pattern }) => pattern.test(message));
}
