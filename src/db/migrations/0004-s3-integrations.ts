import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/** Customer S3 settings, one per account; the secret is stored encrypted (AES-256-GCM). */
export const migration0004S3Integrations = {
  async up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
    await db.schema
      .createTable('s3_integrations')
      .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
      .addColumn('endpoint_url', 'text', (c) => c.notNull())
      .addColumn('access_key_id', 'text', (c) => c.notNull())
      .addColumn('secret_access_key_sealed', 'text', (c) => c.notNull())
      .addColumn('bucket_name', 'text', (c) => c.notNull())
      .addColumn('default_prefix', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
