/**
 * Migration 0019 on real SQLite and PostgreSQL, from rows written before it (issue 50): each asset
 * becomes revision 1 of its name, each existing version pins what its account had at the migration
 * (every name, until its text is read), and after an upload the old version still gets the old file
 * while the draft gets the new one; reading the old rows' asset names narrows the pin to what the
 * version names.
 */
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase, type DatabaseHandle } from '../database.js';
import { migrateTo, migrateToLatest } from '../migrate.js';
import { createAssetService, type AssetService } from '../../assets/assets.js';
import { createLogger } from '../../shared/log.js';
import { createBlobStore } from '../../storage/open-blob-store.js';
import type { BlobStore } from '../../storage/blob-store.js';
import { createAssetUseSource, versionAssetPin } from '../../templates/template-asset-uses.js';
import { createTestDatabase, DIALECTS, type TestDatabase } from '../../../test/support/databases.js';
import { TEST_PG_URL } from '../../../test/support/global-setup.js';

const OLD_LOGO = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><text>OLD</text></svg>');
const NEW_LOGO = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><text>NEW</text></svg>');
const CONTENT = {
  css: null,
  fields: '[]',
  fields_inferred: 1,
  sample_data: null,
  page: null,
  kind: 'pdf',
  canvas: null,
  strict: 0,
};

describe.each(DIALECTS)('migration 0019 (asset revisions) on %s', (dialect) => {
  let testDb: TestDatabase;
  let database: DatabaseHandle;
  let blobs: BlobStore;
  let assets: AssetService;

  beforeAll(async () => {
    testDb = await createTestDatabase(dialect);
    database = await openDatabase({
      dialect,
      url: dialect === 'postgres' ? TEST_PG_URL : undefined,
      sqlitePath: `${testDb.dataDir}/m.db`,
      pgSchema: testDb.pgSchema,
      migrate: false,
    });
    await migrateTo(database.db, dialect, '0018-einvoice-verdict');
    // Rows as the service wrote them before 0019 (the `assets` table then held the file's columns).
    const db = database.db as unknown as import('kysely').Kysely<Record<string, Record<string, unknown>>>;
    for (const id of ['acc_a', 'acc_b'])
      await db
        .insertInto('accounts')
        .values({
          id,
          email: null,
          plan: 'pro',
          credits: 0,
          rate_limit_per_minute: null,
          rate_limit_per_day: null,
          created_at: 0,
        })
        .execute();
    blobs = createBlobStore(pathToFileURL(`${testDb.dataDir}/files`).href);
    await blobs.put('assets/acc_a/oldkey', OLD_LOGO, { contentType: 'image/svg+xml' });
    await db
      .insertInto('assets')
      .values({
        account_id: 'acc_a',
        name: 'logo.svg',
        content_type: 'image/svg+xml',
        size: OLD_LOGO.length,
        sha256: 'old-sha',
        storage_key: 'assets/acc_a/oldkey',
        created_at: 1000,
        updated_at: 2000,
      })
      .execute();
    const html = `<img src="{{ asset('logo.svg') }}">`;
    await db
      .insertInto('templates')
      .values({
        id: 'tpl_branded1',
        account_id: 'acc_a',
        name: 'Branded',
        html,
        ...CONTENT,
        created_at: 0,
        updated_at: 0,
      })
      .execute();
    await db
      .insertInto('template_versions')
      .values({
        template_id: 'tpl_branded1',
        version_number: 1,
        tag: 'v1',
        description: null,
        name: 'Branded',
        html,
        ...CONTENT,
        created_at: 0,
      })
      .execute();
    await db
      .insertInto('templates')
      .values({
        id: 'tpl_bobs0001',
        account_id: 'acc_b',
        name: 'Bob',
        html: '<p>x</p>',
        ...CONTENT,
        created_at: 0,
        updated_at: 0,
      })
      .execute();
    await db
      .insertInto('template_versions')
      .values({
        template_id: 'tpl_bobs0001',
        version_number: 1,
        tag: 'b1',
        description: null,
        name: 'Bob',
        html: '<p>x</p>',
        ...CONTENT,
        created_at: 0,
      })
      .execute();
    await migrateToLatest(database.db, dialect);
    assets = createAssetService({
      db: database.db,
      dialect,
      blobs,
      limits: { maxBytes: 1024 * 1024, accountMaxBytes: 10 * 1024 * 1024, cacheBytes: 1024 * 1024 },
      uses: createAssetUseSource(database.db),
      logger: createLogger('silent'),
    });
  });
  afterAll(async () => {
    await blobs?.close();
    await database?.close();
    await testDb?.dispose();
  });

  const version = (templateId: string) =>
    database.db
      .selectFrom('template_versions')
      .selectAll()
      .where('template_id', '=', templateId)
      .executeTakeFirstOrThrow();

  it("makes each asset revision 1 and pins every existing version at its account's count now", async () => {
    expect(await database.db.selectFrom('asset_revisions').selectAll().execute()).toEqual([
      {
        account_id: 'acc_a',
        name: 'logo.svg',
        revision: 1,
        seq: 1,
        content_type: 'image/svg+xml',
        size: OLD_LOGO.length,
        sha256: 'old-sha',
        storage_key: 'assets/acc_a/oldkey',
        created_at: 2000,
      },
    ]);
    expect(await database.db.selectFrom('assets').selectAll().execute()).toEqual([
      { account_id: 'acc_a', name: 'logo.svg', revision: 1, created_at: 1000, updated_at: 2000 },
    ]);
    expect(await database.db.selectFrom('asset_counters').selectAll().execute()).toEqual([
      { account_id: 'acc_a', last_seq: 1 },
    ]);
    expect(await versionAssetPin(database.db, await version('tpl_branded1'))).toEqual({ seq: 1, names: 'all' });
    // Bob had no assets: his version pins none, even of names he uploads later.
    expect(await versionAssetPin(database.db, await version('tpl_bobs0001'))).toEqual({ seq: 0, names: 'all' });
  });

  it('after an upload, the old version prints the migrated file and the draft the new one; reading its text narrows its pin', async () => {
    const uploaded = await assets.put('acc_a', { name: 'logo.svg', bytes: NEW_LOGO });
    expect(uploaded).toMatchObject({ revision: 2, replaced: true });
    // `put` read the old rows' names first: the draft and v1 name logo.svg.
    expect(uploaded.used_by).toEqual([
      {
        template_id: 'tpl_branded1',
        template_name: 'Branded',
        draft: true,
        versions: [{ version_number: 1, tag: 'v1', revision: 1 }],
        computed: false,
      },
    ]);
    const pin = await versionAssetPin(database.db, await version('tpl_branded1'));
    expect(pin).toEqual({ seq: 1, names: ['logo.svg'] });
    expect((await assets.readForRender('acc_a', 'logo.svg', pin))?.body.equals(OLD_LOGO)).toBe(true);
    expect((await assets.readForRender('acc_a', 'logo.svg'))?.body.equals(NEW_LOGO)).toBe(true);
    const bobs = await assets.put('acc_b', { name: 'logo.svg', bytes: NEW_LOGO });
    expect(bobs).toMatchObject({ revision: 1, replaced: false, used_by: [] });
    expect(
      await assets.readForRender(
        'acc_b',
        'logo.svg',
        await versionAssetPin(database.db, await version('tpl_bobs0001')),
      ),
    ).toBeUndefined();
  });
});
