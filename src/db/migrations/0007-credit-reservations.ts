import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Reservations (issue 12): a PDFGEN debit is "pending" until the document is delivered (posted) or
 * the generation failed (voided, with its REFUND), like a two-phase transfer. A synchronous request's
 * reservation is held by its process under a lease that process renews; if the process dies, the
 * lease runs out and any other process voids it. A job's reservation (`holder` = `job:<id>`, no
 * lease) is resolved by the job's completion or failure. Idempotency keys in progress get the same
 * kind of lease, so a key whose request died with its process can be taken over by a retry.
 *
 * Jobs accepted before this migration and not yet finished get their reservation here, so their
 * failure still refunds them.
 */
export const migration0007CreditReservations = {
  async up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
    await db.schema
      .createTable('credit_reservations')
      .addColumn('transaction_ref', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('holder', 'text', (c) => c.notNull())
      .addColumn('lease_until', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('credit_reservations_lease').on('credit_reservations').column('lease_until').execute();
    await sql`insert into credit_reservations (transaction_ref, account_id, holder, lease_until, created_at)
      select transaction_ref, account_id, 'job:' || id, null, created_at from jobs
      where status in ('pending', 'processing')
        and not exists (select 1 from credit_transactions r where r.refund_of = jobs.transaction_ref)`.execute(db);
    // One column per statement: SQLite's ALTER TABLE adds one column at a time.
    await db.schema.alterTable('idempotency_keys').addColumn('holder', 'text').execute();
    await db.schema.alterTable('idempotency_keys').addColumn('lease_until', 'bigint').execute();
  },
};
