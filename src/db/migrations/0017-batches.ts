import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Batches (issue 40): a batch row holds what its items share and its progress; each item is a job row
 * (`batch_id`, `batch_index`) run by the job workers like any create-async job. `settled` counts items
 * that reached an end (completed, failed or cancelled): the transaction that settles the last one
 * moves the batch on, so exactly one of them does, whichever process it is in. Zip and merged outputs
 * are assembled under a lease of their own (`locked_by`, `locked_until`), like a job.
 */
export const migration0017Batches = {
  async up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
    await db.schema
      .createTable('batches')
      .addColumn('seq', dialect === 'postgres' ? 'bigserial' : 'integer', (c) =>
        dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
      )
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('template_id', 'text', (c) => c.notNull())
      .addColumn('version_number', 'integer')
      .addColumn('version_tag', 'text')
      .addColumn('status', 'text', (c) => c.notNull())
      .addColumn('output', 'text', (c) => c.notNull())
      .addColumn('filename', 'text', (c) => c.notNull())
      .addColumn('options', 'text', (c) => c.notNull())
      .addColumn('total', 'integer', (c) => c.notNull())
      .addColumn('settled', 'integer', (c) => c.notNull())
      .addColumn('completed', 'integer', (c) => c.notNull())
      .addColumn('failed', 'integer', (c) => c.notNull())
      .addColumn('cancelled', 'integer', (c) => c.notNull())
      .addColumn('webhook_url', 'text')
      .addColumn('webhook_secret', 'text')
      .addColumn('locked_by', 'text')
      .addColumn('locked_until', 'bigint')
      .addColumn('attempts', 'integer', (c) => c.notNull())
      .addColumn('result_file_id', 'text')
      .addColumn('result_url', 'text')
      .addColumn('result_filename', 'text')
      .addColumn('result_expires_at', 'bigint')
      .addColumn('result_s3_bucket', 'text')
      .addColumn('result_s3_key', 'text')
      .addColumn('error_code', 'text')
      .addColumn('error_message', 'text')
      .addColumn('request_id', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addColumn('started_at', 'bigint')
      .addColumn('completed_at', 'bigint')
      .execute();
    await db.schema.createIndex('batches_account_seq').on('batches').columns(['account_id', 'seq']).execute();
    await db.schema.createIndex('batches_assembling').on('batches').columns(['status', 'locked_until']).execute();
    await db.schema.alterTable('jobs').addColumn('batch_id', 'text').execute();
    await db.schema.alterTable('jobs').addColumn('batch_index', 'integer').execute();
    // The item's stored file, so a zip or merged PDF reads it back without parsing a link.
    await db.schema.alterTable('jobs').addColumn('result_file_id', 'text').execute();
    await db.schema.createIndex('jobs_batch_index').on('jobs').columns(['batch_id', 'batch_index']).execute();
  },
};
