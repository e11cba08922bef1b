import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * The transaction history names the job (and batch) behind each PDFGEN and REFUND (issue 50), kept on
 * the ledger row itself: the ledger is permanent, and the job rows it would otherwise be read from are
 * deleted by the retention sweep. A REFUND carries its PDFGEN's. Existing rows take them from the jobs
 * still there; those the sweep already deleted stay without.
 */
export const migration0020TransactionJobs = {
  async up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
    await db.schema.alterTable('credit_transactions').addColumn('job_id', 'text').execute();
    await db.schema.alterTable('credit_transactions').addColumn('batch_id', 'text').execute();
    // A passing index, so the fill reads each job by its ref rather than scanning the jobs once per row.
    await db.schema.createIndex('jobs_transaction_ref_fill').on('jobs').column('transaction_ref').execute();
    await sql`update credit_transactions set job_id = (select j.id from jobs j where j.transaction_ref = coalesce(credit_transactions.refund_of, credit_transactions.transaction_ref)),
      batch_id = (select j.batch_id from jobs j where j.transaction_ref = coalesce(credit_transactions.refund_of, credit_transactions.transaction_ref))
      where transaction_type in ('PDFGEN', 'REFUND')`.execute(db);
    await db.schema.dropIndex('jobs_transaction_ref_fill').execute();
    await db.schema
      .createIndex('credit_transactions_batch')
      .on('credit_transactions')
      .columns(['account_id', 'batch_id'])
      .where(sql.ref('batch_id'), 'is not', null)
      .execute();
  },
};
