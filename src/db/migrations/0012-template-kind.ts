import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Image templates (issue 14): a template's `kind` (`pdf`, the default every existing template keeps,
 * or `image`) and, for an image template, its `canvas` (JSON `{width, height}` in CSS pixels, null for
 * a PDF template). Versions snapshot both, so a version renders as the kind it was saved as.
 */
export const migration0012TemplateKind = {
  async up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
    // One column per statement: SQLite's ALTER TABLE adds one column at a time.
    for (const table of ['templates', 'template_versions']) {
      await db.schema
        .alterTable(table)
        .addColumn('kind', 'text', (c) => c.notNull().defaultTo('pdf'))
        .execute();
      await db.schema.alterTable(table).addColumn('canvas', 'text').execute();
    }
    // GET /v1/templates?kind= lists one account's templates of one kind, newest first.
    await db.schema
      .createIndex('templates_account_kind')
      .on('templates')
      .columns(['account_id', 'kind', 'created_at'])
      .execute();
  },
};
