import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Fillable PDF forms as templates (issue 54): a `pdf_form` template (a new value of `kind`) keeps its
 * form's PDF in the blob store under `form_key` (a fresh key per upload, never rewritten) and what was
 * read of it in `form` (JSON: pages, size, SHA-256 and the form's terminal fields). Versions copy both,
 * so a published version keeps filling the PDF it was published with. Null for every other template.
 */
export const migration0023PdfFormTemplates = {
  async up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
    // One column per statement: SQLite's ALTER TABLE adds one column at a time.
    for (const table of ['templates', 'template_versions']) {
      await db.schema.alterTable(table).addColumn('form_key', 'text').execute();
      await db.schema.alterTable(table).addColumn('form', 'text').execute();
    }
  },
};
