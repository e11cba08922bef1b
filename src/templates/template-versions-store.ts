/** SQL for template versions and their per-template number counter. */
import { sql } from 'kysely';
import type { DbOrTx } from '../db/database.js';
import type { TemplateVersionRow } from '../db/schema.js';

/** Gives out the template's next version number (never one given before, even if deleted). */
export async function nextVersionNumber(db: DbOrTx, templateId: string): Promise<number> {
  const row = await db
    .insertInto('template_version_counters')
    .values({ template_id: templateId, last_number: 1 })
    .onConflict((oc) =>
      oc.column('template_id').doUpdateSet({ last_number: sql`template_version_counters.last_number + 1` }),
    )
    .returning('last_number')
    .executeTakeFirstOrThrow();
  return Number(row.last_number);
}

export async function insertVersion(db: DbOrTx, row: TemplateVersionRow): Promise<void> {
  await db.insertInto('template_versions').values(row).execute();
}

/** Versions without their snapshot text, ascending by number. */
export async function listVersions(db: DbOrTx, templateId: string) {
  return db
    .selectFrom('template_versions')
    .select(['version_number', 'tag', 'description', 'created_at'])
    .where('template_id', '=', templateId)
    .orderBy('version_number', 'asc')
    .execute();
}

export async function findVersionByNumber(
  db: DbOrTx,
  templateId: string,
  versionNumber: number,
): Promise<TemplateVersionRow | undefined> {
  return db
    .selectFrom('template_versions')
    .selectAll()
    .where('template_id', '=', templateId)
    .where('version_number', '=', versionNumber)
    .executeTakeFirst();
}

export async function findVersionByTag(
  db: DbOrTx,
  templateId: string,
  tag: string,
): Promise<TemplateVersionRow | undefined> {
  return db
    .selectFrom('template_versions')
    .selectAll()
    .where('template_id', '=', templateId)
    .where('tag', '=', tag)
    .executeTakeFirst();
}

/** Changes only the tag and description: a snapshot's content never changes. */
export async function updateVersionLabel(
  db: DbOrTx,
  templateId: string,
  versionNumber: number,
  changes: { tag?: string; description?: string | null },
): Promise<void> {
  await db
    .updateTable('template_versions')
    .set(changes)
    .where('template_id', '=', templateId)
    .where('version_number', '=', versionNumber)
    .execute();
}

export async function deleteVersion(db: DbOrTx, templateId: string, versionNumber: number): Promise<boolean> {
  const result = await db
    .deleteFrom('template_versions')
    .where('template_id', '=', templateId)
    .where('version_number', '=', versionNumber)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** A template's versions and counter go with it (the foreign keys cascade too; this does not rely on them). */
export async function deleteTemplateVersions(db: DbOrTx, templateId: string): Promise<void> {
  await db.deleteFrom('template_versions').where('template_id', '=', templateId).execute();
  await db.deleteFrom('template_version_counters').where('template_id', '=', templateId).execute();
}

/** True for a unique-constraint violation on either dialect (two requests racing for one tag). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
