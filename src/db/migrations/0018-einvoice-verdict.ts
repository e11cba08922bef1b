import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * E-invoices judged by the official rules (issue 41): a job keeps what the checks concluded when it was
 * accepted (JSON `{checks, warnings}`: the rule sets that judged its e-invoice and their warnings), so
 * the job shows `einvoice_checks` and its delivered document carries the warnings; null without an e-invoice.
 */
export const migration0018EinvoiceVerdict = {
  async up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
    await db.schema.alterTable('jobs').addColumn('einvoice_verdict', 'text').execute();
  },
};
