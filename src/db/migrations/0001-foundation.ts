import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/** Accounts, API keys, the credits ledger and templates. */
export const migration0001Foundation = {
  async up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
    await db.schema
      .createTable('accounts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('email', 'text')
      .addColumn('plan', 'text', (c) => c.notNull())
      .addColumn('credits', 'integer', (c) => c.notNull().check(sql`credits >= 0`))
      .addColumn('rate_limit_per_minute', 'integer')
      .addColumn('rate_limit_per_day', 'integer')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();

    await db.schema
      .createTable('api_keys')
      .addColumn('prefix', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('key_hash', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('revoked_at', 'bigint')
      .execute();
    await db.schema.createIndex('api_keys_account').on('api_keys').column('account_id').execute();

    await db.schema
      .createTable('credit_transactions')
      .addColumn('seq', dialect === 'postgres' ? 'bigserial' : 'integer', (c) =>
        dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
      )
      .addColumn('transaction_ref', 'text', (c) => c.notNull().unique())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('transaction_type', 'text', (c) => c.notNull())
      .addColumn('template_id', 'text')
      .addColumn('exec_tm', 'integer')
      .addColumn('credits', 'integer', (c) => c.notNull())
      // A generation is refunded at most once: the database enforces it, not only the code.
      .addColumn('refund_of', 'text', (c) => c.unique())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema
      .createIndex('credit_transactions_account_seq')
      .on('credit_transactions')
      .columns(['account_id', 'seq'])
      .execute();

    await db.schema
      .createTable('templates')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('html', 'text', (c) => c.notNull())
      .addColumn('css', 'text')
      .addColumn('fields', 'text', (c) => c.notNull())
      .addColumn('fields_inferred', 'integer', (c) => c.notNull())
      .addColumn('sample_data', 'text')
      .addColumn('page', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('updated_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('templates_account').on('templates').columns(['account_id', 'created_at']).execute();
  },
};
