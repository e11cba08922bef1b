import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * The asset library (issue 13): one row per account and name, the bytes in the blob store under
 * `storage_key` (a fresh key per upload, so a replaced asset's old bytes are never served under the
 * new row). Jobs keep the warnings of their render (JSON array of `{code, message, url?}`, null
 * when none), shown on the job and sent with its webhook.
 */
export const migration0013Assets = {
  async up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
    await db.schema
      .createTable('assets')
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('size', 'bigint', (c) => c.notNull())
      .addColumn('sha256', 'text', (c) => c.notNull())
      .addColumn('storage_key', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('assets_pk', ['account_id', 'name'])
      .execute();
    await db.schema.alterTable('jobs').addColumn('warnings', 'text').execute();
  },
};
