/** SQL for templates. */
import type { DbOrTx } from '../db/database.js';
import type { TemplateRow } from '../db/schema.js';

export async function insertTemplate(db: DbOrTx, row: TemplateRow): Promise<void> {
  await db.insertInto('templates').values(row).execute();
}

export async function findTemplate(db: DbOrTx, templateId: string): Promise<TemplateRow | undefined> {
  return db.selectFrom('templates').selectAll().where('id', '=', templateId).executeTakeFirst();
}

/** An account's templates (of one kind, when given), newest first. */
export async function listTemplates(db: DbOrTx, accountId: string, kind?: TemplateRow['kind']) {
  let query = db
    .selectFrom('templates')
    .select(['id', 'name', 'kind', 'created_at', 'updated_at'])
    .where('account_id', '=', accountId);
  if (kind) query = query.where('kind', '=', kind);
  return query.orderBy('created_at', 'desc').orderBy('id').execute();
}

export async function updateTemplate(db: DbOrTx, templateId: string, changes: Partial<TemplateRow>): Promise<void> {
  await db.updateTable('templates').set(changes).where('id', '=', templateId).execute();
}

export async function deleteTemplate(db: DbOrTx, templateId: string): Promise<void> {
  await db.deleteFrom('templates').where('id', '=', templateId).execute();
}

/** The form PDF keys a template's versions keep (pdf_form templates; released when the template goes). */
export async function versionFormKeys(db: DbOrTx, templateId: string): Promise<(string | null)[]> {
  const rows = await db
    .selectFrom('template_versions')
    .select('form_key')
    .where('template_id', '=', templateId)
    .where('form_key', 'is not', null)
    .execute();
  return rows.map((r) => r.form_key);
}
