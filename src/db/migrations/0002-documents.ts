import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/** Generated files (for signed links and the expiry sweep) and idempotency keys. */
export const migration0002Documents = {
  async up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
    await db.schema
      .createTable('files')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('storage_key', 'text', (c) => c.notNull())
      .addColumn('filename', 'text', (c) => c.notNull())
      .addColumn('size', 'integer', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('files_expires_at').on('files').column('expires_at').execute();

    await db.schema
      .createTable('idempotency_keys')
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('idem_key', 'text', (c) => c.notNull())
      .addColumn('request_hash', 'text', (c) => c.notNull())
      .addColumn('state', 'text', (c) => c.notNull())
      .addColumn('response', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_id', 'idem_key'])
      .execute();
    await db.schema.createIndex('idempotency_keys_expires_at').on('idempotency_keys').column('expires_at').execute();
  },
};
