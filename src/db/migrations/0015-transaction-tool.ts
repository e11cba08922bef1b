import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * What a charge without a template paid for (issue 43): the PDF tool of a PDF tools run (`merge`,
 * `extract-pages`, `rotate`), so the transaction list can say which; null for every other row (and
 * every existing one: a template's generation is told by its `template_id`).
 */
export const migration0015TransactionTool = {
  async up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
    await db.schema.alterTable('credit_transactions').addColumn('tool', 'text').execute();
  },
};
