import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Signing certificates (issue 39): one row per account and name. The PKCS#12 file and its password
 * are sealed together (AES-256-GCM, a key derived for this purpose only); the certificate's facts are
 * kept in the clear so a listing never opens a key.
 */
export const migration0016SigningCertificates = {
  async up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
    await db.schema
      .createTable('signing_certificates')
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('subject', 'text', (c) => c.notNull())
      .addColumn('issuer', 'text', (c) => c.notNull())
      .addColumn('serial', 'text', (c) => c.notNull())
      .addColumn('not_before', 'bigint', (c) => c.notNull())
      .addColumn('not_after', 'bigint', (c) => c.notNull())
      .addColumn('fingerprint_sha256', 'text', (c) => c.notNull())
      .addColumn('pkcs12_sealed', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('signing_certificates_pk', ['account_id', 'name'])
      .execute();
  },
};
