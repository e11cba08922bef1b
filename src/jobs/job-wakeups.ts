/**
 * Wake-ups for idle workers, so a new job starts in milliseconds instead of at the next poll.
 * - Same process (both dialects): an in-process signal right after the accepting transaction commits.
 * - Other processes on PostgreSQL: `pg_notify` inside the accepting transaction (PostgreSQL delivers it
 *   on commit, never for a rolled-back job) and `LISTEN` on one dedicated connection.
 * - Other processes on SQLite: none; they find the job at their next poll.
 * A missed wake-up only costs latency: workers always poll as well (`PRESSROOM_JOB_POLL_MS`).
 */
import { EventEmitter } from 'node:events';
import { sql } from 'kysely';
import pg from 'pg';
import type { DatabaseHandle, DbOrTx } from '../db/database.js';
import type { Logger } from '../shared/log.js';

/** The wake-up channel of one deployment. */
export interface JobWakeups {
  /** Joins the caller's transaction: other processes hear of the job once it commits (PostgreSQL). */
  notifyInTransaction(trx: DbOrTx): Promise<void>;
  /** Wakes this process's workers (call after the commit). */
  announce(): void;
  /** Calls `listener` on every wake-up; starts listening to other processes on first use. */
  subscribe(listener: () => void): () => void;
  close(): Promise<void>;
}

const RECONNECT_DELAY_MS = 2000;

/**
 * The channel is per PostgreSQL schema: several deployments (and every test file) can share one
 * database without waking each other's workers.
 */
async function channelName(database: DatabaseHandle): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db);
  return `pressroom_jobs:${rows[0]?.schema ?? 'public'}`.slice(0, 63);
}

/** Creates the wake-ups of one process; on PostgreSQL it first learns the schema's channel name. */
export async function createJobWakeups(database: DatabaseHandle, logger: Logger): Promise<JobWakeups> {
  const local = new EventEmitter();
  local.setMaxListeners(0);
  const channel = database.dialect === 'postgres' ? await channelName(database) : '';
  let client: pg.Client | undefined;
  let closed = false;
  let reconnect: NodeJS.Timeout | undefined;

  // A dedicated client, not one borrowed from the pool: LISTEN holds its connection for good.
  const listen = async (): Promise<void> => {
    if (closed || client || !database.pgPool) return;
    const next = new pg.Client(database.pgPool.options as pg.ClientConfig);
    const retry = (error?: Error) => {
      if (error) logger.warn({ err: error }, 'job wake-up connection lost; polling until it is back');
      next.removeAllListeners();
      void next.end().catch(() => undefined);
      if (client === next) client = undefined;
      if (!closed && !reconnect)
        reconnect = setTimeout(() => ((reconnect = undefined), void listen()), RECONNECT_DELAY_MS);
    };
    next.on('notification', () => local.emit('wake'));
    next.on('error', retry);
    next.on('end', () => retry());
    client = next;
    try {
      await next.connect();
      await next.query(`listen "${channel.replace(/"/g, '""')}"`);
    } catch (error) {
      retry(error as Error);
    }
  };

  return {
    async notifyInTransaction(trx) {
      if (database.dialect === 'postgres') await sql`select pg_notify(${channel}, '')`.execute(trx);
    },
    announce() {
      local.emit('wake');
    },
    subscribe(listener) {
      local.on('wake', listener);
      void listen();
      return () => local.off('wake', listener);
    },
    async close() {
      closed = true;
      clearTimeout(reconnect);
      local.removeAllListeners();
      const current = client;
      client = undefined;
      current?.removeAllListeners();
      current?.on('error', () => undefined);
      await current?.end().catch(() => undefined);
    },
  };
}
