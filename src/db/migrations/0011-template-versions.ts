import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Template versions: immutable snapshots of a template, named by a tag unique per template. Numbers
 * come from a per-template counter so a deleted version's number is never given out again. A job
 * keeps the version number it was accepted for (and the tag it had then), so it renders that snapshot
 * whatever happens to the draft or the tags before it runs.
 */
export const migration0011TemplateVersions = {
  async up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
    await db.schema
      .createTable('template_versions')
      .addColumn('template_id', 'text', (c) => c.notNull().references('templates.id').onDelete('cascade'))
      .addColumn('version_number', 'integer', (c) => c.notNull())
      .addColumn('tag', 'text', (c) => c.notNull())
      .addColumn('description', 'text')
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('html', 'text', (c) => c.notNull())
      .addColumn('css', 'text')
      .addColumn('fields', 'text', (c) => c.notNull())
      .addColumn('fields_inferred', 'integer', (c) => c.notNull())
      .addColumn('sample_data', 'text')
      .addColumn('page', 'text')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('template_versions_pk', ['template_id', 'version_number'])
      .addUniqueConstraint('template_versions_tag', ['template_id', 'tag'])
      .execute();
    await db.schema
      .createTable('template_version_counters')
      .addColumn('template_id', 'text', (c) => c.primaryKey().references('templates.id').onDelete('cascade'))
      .addColumn('last_number', 'integer', (c) => c.notNull())
      .execute();
    // One column per statement: SQLite's ALTER TABLE adds one column at a time.
    await db.schema.alterTable('jobs').addColumn('version_number', 'integer').execute();
    await db.schema.alterTable('jobs').addColumn('version_tag', 'text').execute();
  },
};
