/**
 * One data layer for both dialects: Kysely over better-sqlite3 (the embedded default) or pg.
 * Stores write their queries once; they branch on `dialect` only where the databases really differ.
 */
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import {
  CompiledQuery,
  Kysely,
  PostgresDialect,
  SqliteDialect,
  SqliteDriver,
  type DatabaseConnection,
  type Driver,
  type SqliteDatabase,
  type Transaction,
} from 'kysely';
import type { Database } from './schema.js';
import { migrateToLatest } from './migrate.js';

import type { Dialect } from './dialect.js';

export type { Dialect };
export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;
/** Either the database or an open transaction: store functions accept both. */
export type DbOrTx = Kysely<Database> | Transaction<Database>;

export interface DatabaseHandle {
  readonly db: Db;
  readonly dialect: Dialect;
  /** The pg pool (PostgreSQL only), for LISTEN/NOTIFY. */
  readonly pgPool?: pg.Pool;
  close(): Promise<void>;
}

/**
 * PostgreSQL connections per process: enough for its requests and workers (a generation holds a
 * connection only between steps, not while it renders), few enough that several processes share
 * PostgreSQL's default of 100 connections.
 */
export const DATABASE_POOL_SIZE = 10;

export interface DatabaseOptions {
  dialect: Dialect;
  /** PostgreSQL connection string. */
  url?: string;
  /** SQLite file (`:memory:` allowed). */
  sqlitePath?: string;
  /** PostgreSQL connections; tests that hammer the pool take more. @defaultValue DATABASE_POOL_SIZE */
  poolSize?: number;
  /** PostgreSQL schema to use (tests give each file its own). */
  pgSchema?: string;
  /** Apply pending migrations before returning. @defaultValue true */
  migrate?: boolean;
}

/**
 * SQLite's default BEGIN is DEFERRED: two writers that both read first can dead-end with SQLITE_BUSY on
 * the upgrade, which busy_timeout does not retry. BEGIN IMMEDIATE takes the write lock up front.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #database: SqliteDatabase;
  constructor(sqlite: BetterSqlite3.Database) {
    const database = withStatementCache(sqlite);
    super({ database });
    this.#database = database;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver({ database: this.#database });
  }
}

/** Distinct SQL texts whose prepared statements are kept (oldest dropped first). */
const STATEMENT_CACHE_SIZE = 500;

/**
 * Kysely's SQLite driver prepares every query anew, a measurable share of Node's CPU per generated
 * PDF (profiled under `npm run bench`: docs/performance-log/2026-11-23-first-benchmarks.md). Statements are kept by SQL text and
 * reused: better-sqlite3 runs each to completion synchronously (`all`/`run`; nothing here streams),
 * so one is never in use twice at once, and SQLite re-prepares a kept statement itself when a
 * migration changes the schema.
 */
function withStatementCache(sqlite: BetterSqlite3.Database): SqliteDatabase {
  const statements = new Map<string, BetterSqlite3.Statement>();
  return {
    prepare(sql: string) {
      let statement = statements.get(sql);
      if (!statement) {
        statement = sqlite.prepare(sql);
        if (statements.size >= STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value!);
        statements.set(sql, statement);
      }
      return statement;
    },
    close() {
      statements.clear();
      sqlite.close();
    },
  };
}

function openSqlite(path: string): BetterSqlite3.Database {
  if (path !== ':memory:') {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    // Created for its owner only; SQLite gives the -wal and -shm files the database file's mode.
    closeSync(openSync(path, 'a', 0o600));
  }
  const sqlite = new BetterSqlite3(path);
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  return sqlite;
}

const PG_INT8 = 20;
const PG_NUMERIC = 1700;

function openPostgres(url: string, poolSize: number, schema?: string): pg.Pool {
  return new pg.Pool({
    connectionString: url,
    max: poolSize,
    // Times and counts are int8; they fit in a double (epoch ms < 2^53), so read them as numbers.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === PG_INT8 || oid === PG_NUMERIC
          ? (v: string) => Number(v)
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
    options: schema ? `-c search_path=${schema}` : undefined,
    connectionTimeoutMillis: 5000,
  });
}

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  let handle: DatabaseHandle;
  if (options.dialect === 'postgres') {
    if (!options.url) throw new Error('a PostgreSQL URL is required');
    const pool = openPostgres(options.url, options.poolSize ?? DATABASE_POOL_SIZE, options.pgSchema);
    // An idle client that loses its server (restart) emits 'error'; without a listener Node would crash.
    pool.on('error', () => undefined);
    // So does a checked-out client between two queries (inside a transaction, before its release): the
    // pool only listens to idle ones. Its next query fails instead ("not queryable", a 503) and the
    // pool drops it on release (issue 7's PostgreSQL-restart drill crashed API and worker processes).
    pool.on('connect', (client) => client.on('error', () => undefined));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    handle = { db, dialect: 'postgres', pgPool: pool, close: () => db.destroy() };
  } else {
    const sqlite = openSqlite(options.sqlitePath ?? ':memory:');
    const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect(sqlite) });
    handle = { db, dialect: 'sqlite', close: () => db.destroy() };
  }
  if (options.migrate !== false) {
    try {
      await migrateToLatest(handle.db, handle.dialect);
    } catch (error) {
      await handle.close();
      throw error;
    }
  }
  return handle;
}

/** Runs `work` in one database transaction. */
export function withTransaction<T>(db: Db, work: (trx: Tx) => Promise<T>): Promise<T> {
  return db.transaction().execute(work);
}
