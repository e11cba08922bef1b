import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Asset revisions and frozen versions (issue 50): an upload under an existing name adds a revision
 * instead of replacing the file, and a published version prints the revisions it was published with.
 *
 *   - `asset_revisions`: every kept file of a name (`revision` 1, 2, 3… per name), with `seq`, the
 *     account's asset counter when it was uploaded. `assets` keeps one row per name pointing at its
 *     current revision (its file columns move to the revision).
 *   - `asset_counters`: the account's counter, raised by every upload (never given out twice).
 *   - `template_versions.asset_seq`: the counter when the version was published. The version prints,
 *     of each asset name it uses, the revision newest at that count.
 *   - `template_asset_uses`: the asset names a template's draft (`version_number` 0) or a version
 *     names, `*` when it computes names (`asset(data.logo)`); `asset_uses_known` 0 until they were
 *     read from its text (rows older than this migration are read on first need).
 *
 * Existing rows: each asset becomes revision 1 of its name, at count 1; every existing version is
 * pinned at the count of its account now, so it keeps printing the files the account has today.
 */
export const migration0019AssetRevisions = {
  async up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
    await db.schema
      .createTable('asset_revisions')
      .addColumn('account_id', 'text', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('revision', 'integer', (c) => c.notNull())
      .addColumn('seq', 'bigint', (c) => c.notNull())
      .addColumn('content_type', 'text', (c) => c.notNull())
      .addColumn('size', 'bigint', (c) => c.notNull())
      .addColumn('sha256', 'text', (c) => c.notNull())
      .addColumn('storage_key', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('asset_revisions_pk', ['account_id', 'name', 'revision'])
      .execute();
    await db.schema
      .createIndex('asset_revisions_seq')
      .on('asset_revisions')
      .columns(['account_id', 'name', 'seq'])
      .execute();
    await sql`insert into asset_revisions (account_id, name, revision, seq, content_type, size, sha256, storage_key, created_at)
      select account_id, name, 1, 1, content_type, size, sha256, storage_key, updated_at from assets`.execute(db);

    await db.schema
      .alterTable('assets')
      .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(1))
      .execute();
    // One column per statement: SQLite's ALTER TABLE drops one at a time.
    for (const column of ['content_type', 'size', 'sha256', 'storage_key'])
      await db.schema.alterTable('assets').dropColumn(column).execute();

    await db.schema
      .createTable('asset_counters')
      .addColumn('account_id', 'text', (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
      .addColumn('last_seq', 'bigint', (c) => c.notNull())
      .execute();
    await sql`insert into asset_counters (account_id, last_seq) select distinct account_id, 1 from assets`.execute(db);

    await db.schema
      .alterTable('template_versions')
      .addColumn('asset_seq', 'bigint', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable('template_versions')
      .addColumn('asset_uses_known', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable('templates')
      .addColumn('asset_uses_known', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await sql`update template_versions set asset_seq = coalesce((
        select c.last_seq from asset_counters c join templates t on t.account_id = c.account_id where t.id = template_versions.template_id
      ), 0)`.execute(db);

    await db.schema
      .createTable('template_asset_uses')
      .addColumn('template_id', 'text', (c) => c.notNull().references('templates.id').onDelete('cascade'))
      .addColumn('version_number', 'integer', (c) => c.notNull())
      .addColumn('name', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('template_asset_uses_pk', ['template_id', 'version_number', 'name'])
      .execute();
    await db.schema.createIndex('template_asset_uses_name').on('template_asset_uses').columns(['name']).execute();
  },
};
