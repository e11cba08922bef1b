import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Strict templates (issue 13): a template's `strict` setting (1 or 0; every existing template keeps 0,
 * the lenient mode it was written for). In a strict template an undefined variable or a required field
 * the data lacks is an error (422) instead of a warning. Versions snapshot it with the rest.
 */
export const migration0014TemplateStrict = {
  async up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
    for (const table of ['templates', 'template_versions']) {
      await db.schema
        .alterTable(table)
        .addColumn('strict', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
    }
  },
};
