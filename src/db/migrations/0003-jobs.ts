import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Asynchronous jobs and their webhook deliveries. Both tables are queues: a row's state, `run_at` /
 * `next_attempt_at` and lease (`locked_by`, `locked_until`) are the whole queue state, so a restart
 * or a killed worker loses nothing (issue 4).
 */
export const migration0003Jobs = {
  async up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
    await db.schema
      .createTable('jobs')
      // Insertion order: the newest-first listing sorts on it (ids are random UUIDs).
      .addColumn('seq', dialect === 'postgres' ? 'bigserial' : 'integer', (c) =>
        dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
      )
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('template_id', 'text', (c) => c.notNull())
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('options', 'text', (c) => c.notNull())
      .addColumn('filename', 'text')
      .addColumn('store_s3', 'integer', (c) => c.notNull())
      .addColumn('webhook_url', 'text')
      .addColumn('webhook_secret', 'text')
      .addColumn('transaction_ref', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('run_at', 'bigint', (c) => c.notNull())
      .addColumn('locked_by', 'text')
      .addColumn('locked_until', 'bigint')
      .addColumn('last_error', 'text')
      .addColumn('error_code', 'text')
      .addColumn('error_message', 'text')
      .addColumn('result_url', 'text')
      .addColumn('result_filename', 'text')
      .addColumn('result_expires_at', 'bigint')
      .addColumn('result_s3_bucket', 'text')
      .addColumn('result_s3_key', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('started_at', 'bigint')
      .addColumn('completed_at', 'bigint')
      .execute();
    await db.schema.createIndex('jobs_claim_pending').on('jobs').columns(['status', 'run_at']).execute();
    await db.schema.createIndex('jobs_claim_expired').on('jobs').columns(['status', 'locked_until']).execute();
    await db.schema.createIndex('jobs_account_seq').on('jobs').columns(['account_id', 'seq']).execute();

    await db.schema
      .createTable('webhook_deliveries')
      // The Standard Webhooks `webhook-id`: constant across retries so receivers can de-duplicate.
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
      .addColumn('event', 'text', (c) => c.notNull())
      .addColumn('url', 'text', (c) => c.notNull())
      .addColumn('secret', 'text')
      .addColumn('payload', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
      .addColumn('locked_by', 'text')
      .addColumn('locked_until', 'bigint')
      .addColumn('last_status', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('delivered_at', 'bigint')
      // One notification per job and event, even if a completion were ever recorded twice.
      .addUniqueConstraint('webhook_deliveries_job_event', ['job_id', 'event'])
      .execute();
    await db.schema
      .createIndex('webhook_deliveries_due')
      .on('webhook_deliveries')
      .columns(['state', 'next_attempt_at'])
      .execute();
  },
};
