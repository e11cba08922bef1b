/**
 * Which errors count as "the database is unavailable for now": first the table's entries as errors
 * shaped like node-postgres's, then errors caught from the real PostgreSQL and SQLite, where an outage
 * (refused connection, a session the server ended, a pool with no free connection) must count and a
 * wrong query must not.
 */
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { TEST_PG_URL } from '../../test/support/global-setup.js';
import { isDatabaseUnavailable } from './retryable-errors.js';

const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it.each([
    { scenario: 'PostgreSQL admin_shutdown (57P01)', error: coded('57P01'), unavailable: true },
    { scenario: 'PostgreSQL crash_shutdown (57P02)', error: coded('57P02'), unavailable: true },
    { scenario: 'PostgreSQL cannot_connect_now (57P03)', error: coded('57P03'), unavailable: true },
    { scenario: 'PostgreSQL too_many_connections (53300)', error: coded('53300'), unavailable: true },
    { scenario: 'PostgreSQL unable to establish a connection (08001)', error: coded('08001'), unavailable: true },
    { scenario: 'PostgreSQL connection does not exist (08003)', error: coded('08003'), unavailable: true },
    { scenario: 'PostgreSQL connection failure (08006)', error: coded('08006'), unavailable: true },
    {
      scenario: 'connection refused',
      error: coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'),
      unavailable: true,
    },
    { scenario: 'connection reset', error: coded('ECONNRESET', 'read ECONNRESET'), unavailable: true },
    {
      scenario: 'socket closed under a query',
      error: new Error('Connection terminated unexpectedly'),
      unavailable: true,
    },
    {
      scenario: 'socket closed by the connect timeout',
      error: new Error('Connection terminated due to connection timeout'),
      unavailable: true,
    },
    {
      scenario: 'pool without a free connection',
      error: new Error('timeout exceeded when trying to connect'),
      unavailable: true,
    },
    {
      scenario: 'client whose connection failed',
      error: new Error('Client has encountered a connection error and is not queryable'),
      unavailable: true,
    },
    {
      scenario: 'session ended by the server, message only',
      error: new Error('terminating connection due to administrator command'),
      unavailable: true,
    },
    {
      scenario: 'server starting up, message only',
      error: new Error('the database system is starting up'),
      unavailable: true,
    },
    {
      scenario: 'server shutting down, other case',
      error: new Error('The Database System Is Shutting Down'),
      unavailable: true,
    },
    {
      scenario: 'unique violation (23505)',
      error: coded('23505', 'duplicate key value violates unique constraint'),
      unavailable: false,
    },
    { scenario: 'syntax error (42601)', error: coded('42601', 'syntax error at or near "selec"'), unavailable: false },
    { scenario: 'SQLite busy', error: coded('SQLITE_BUSY', 'database is locked'), unavailable: false },
    {
      scenario: 'DNS failure of some other host',
      error: coded('ENOTFOUND', 'getaddrinfo ENOTFOUND example.invalid'),
      unavailable: false,
    },
    {
      scenario: 'a bug',
      error: new TypeError("Cannot read properties of undefined (reading 'id')"),
      unavailable: false,
    },
    { scenario: 'a numeric code', error: { code: 57, message: 'x' }, unavailable: false },
    { scenario: 'a string thrown', error: 'Connection terminated', unavailable: false },
    { scenario: 'null', error: null, unavailable: false },
    { scenario: 'undefined', error: undefined, unavailable: false },
  ])('$scenario → $unavailable', ({ error, unavailable }) => {
    expect(isDatabaseUnavailable(error)).toBe(unavailable);
  });
});

/** Runs `work` and returns what it threw (fails the test if it did not throw). */
async function caught(work: () => Promise<unknown>): Promise<unknown> {
  try {
    await work();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

/** A connected client whose late 'error' events (after the server ends the session) are ignored. */
async function connectedClient(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: TEST_PG_URL });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

describe('isDatabaseUnavailable on errors from the real databases', () => {
  it.each([
    {
      scenario: 'PostgreSQL: nothing listens on the port',
      unavailable: true,
      produce: () =>
        caught(() =>
          new pg.Client({
            host: '127.0.0.1',
            port: 1,
            user: 'postgres',
            database: 'test',
            connectionTimeoutMillis: 10_000,
          }).connect(),
        ),
    },
    {
      scenario: 'PostgreSQL: the server ends our session, then the next query on that client',
      unavailable: true,
      produce: async () => {
        const client = await connectedClient();
        const ended = await caught(() => client.query('select pg_terminate_backend(pg_backend_pid())'));
        expect(ended).toMatchObject({ code: '57P01' });
        return caught(() => client.query('select 1'));
      },
    },
    {
      scenario: 'PostgreSQL: the server ends our session',
      unavailable: true,
      produce: async () => {
        const client = await connectedClient();
        return caught(() => client.query('select pg_terminate_backend(pg_backend_pid())'));
      },
    },
    {
      scenario: 'PostgreSQL: a pool whose only connection is taken',
      unavailable: true,
      produce: async () => {
        // The first connection may take seconds on a loaded machine; only the wait for a second one is short.
        const pool = new pg.Pool({ connectionString: TEST_PG_URL, max: 1, connectionTimeoutMillis: 60_000 });
        const held = await pool.connect();
        pool.options.connectionTimeoutMillis = 200;
        try {
          return await caught(() => pool.connect());
        } finally {
          held.release();
          await pool.end();
        }
      },
    },
    {
      scenario: 'PostgreSQL: a wrong query',
      unavailable: false,
      produce: async () => {
        const client = await connectedClient();
        try {
          return await caught(() => client.query('select * from no_such_table_here'));
        } finally {
          await client.end();
        }
      },
    },
    {
      scenario: 'SQLite: a constraint violation',
      unavailable: false,
      produce: async () => {
        const sqlite = new BetterSqlite3(':memory:');
        try {
          sqlite.exec('create table t (id integer primary key); insert into t values (1)');
          return await caught(async () => sqlite.exec('insert into t values (1)'));
        } finally {
          sqlite.close();
        }
      },
    },
  ])('$scenario → $unavailable', async ({ produce, unavailable }) => {
    const error = await produce();
    expect(isDatabaseUnavailable(error), String((error as Error)?.message)).toBe(unavailable);
  });
});
