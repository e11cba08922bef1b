/**
 * The asset names each template's draft and versions use (issue 50), kept in `template_asset_uses`
 * (version 0 is the draft; `*` for a template that computes names): written when a draft is saved
 * and when a version is published, read by the asset library (AssetUseSource) for "used by", for
 * what a version pins and for which revisions it keeps. Rows saved before names were recorded
 * (`asset_uses_known = 0`, migration 0019) count as `*` until `refresh` reads their text.
 */
import type { Db, DbOrTx } from '../db/database.js';
import { withTransaction } from '../db/database.js';
import { ANY_ASSET, type AssetPin, type AssetUseRow, type AssetUseSource } from '../assets/asset-revisions.js';
import type { PageSetup } from '../rendering/pdf-options.js';
import { assetNamesOf } from '../template-language/compiler.js';

/** Drafts and versions whose text one `refresh` reads at most: the first asset call after an upgrade stays short. */
const REFRESH_BATCH = 50;

/** The draft's row number in template_asset_uses. */
export const DRAFT = 0;

/** The parts a template's asset names are read from. */
export interface AssetNamedParts {
  html: string;
  css?: string | null | undefined;
  page?: Pick<PageSetup, 'header_html' | 'footer_html'> | null | undefined;
}

/** The names the parts use: literal names, or `[*]` when a part computes them. */
export function assetUsesOf(parts: AssetNamedParts): string[] {
  const found = assetNamesOf([parts.html, parts.css, parts.page?.header_html, parts.page?.footer_html]);
  return found.computed ? [ANY_ASSET] : found.names;
}

/** Replaces the names recorded for the draft or a version of `templateId`. */
export async function recordAssetUses(
  db: DbOrTx,
  templateId: string,
  versionNumber: number,
  names: readonly string[],
): Promise<void> {
  await db
    .deleteFrom('template_asset_uses')
    .where('template_id', '=', templateId)
    .where('version_number', '=', versionNumber)
    .execute();
  if (names.length > 0)
    await db
      .insertInto('template_asset_uses')
      .values(names.map((name) => ({ template_id: templateId, version_number: versionNumber, name })))
      .execute();
}

/** Forgets the names of a version (versionNumber) or of the template and all its versions. */
export async function forgetAssetUses(db: DbOrTx, templateId: string, versionNumber?: number): Promise<void> {
  let query = db.deleteFrom('template_asset_uses').where('template_id', '=', templateId);
  if (versionNumber !== undefined) query = query.where('version_number', '=', versionNumber);
  await query.execute();
}

/** What a version prints of the account's assets: its pin count and names (`all` until its names are known). */
export async function versionAssetPin(
  db: DbOrTx,
  row: { template_id: string; version_number: number; asset_seq: number; asset_uses_known: number },
): Promise<AssetPin> {
  const seq = Number(row.asset_seq);
  if (Number(row.asset_uses_known) !== 1) return { seq, names: 'all' };
  const names = (
    await db
      .selectFrom('template_asset_uses')
      .select('name')
      .where('template_id', '=', row.template_id)
      .where('version_number', '=', row.version_number)
      .execute()
  ).map((r) => r.name);
  return { seq, names: names.includes(ANY_ASSET) ? 'all' : names };
}

/** Reads the names of up to REFRESH_BATCH of the account's drafts and versions not read yet. */
async function refresh(db: Db, accountId: string): Promise<void> {
  const drafts = await db
    .selectFrom('templates')
    .select(['id', 'html', 'css', 'page'])
    .where('account_id', '=', accountId)
    .where('asset_uses_known', '=', 0)
    .limit(REFRESH_BATCH)
    .execute();
  for (const draft of drafts) {
    const names = assetUsesOf({ html: draft.html, css: draft.css, page: parsePage(draft.page) });
    await withTransaction(db, async (trx) => {
      await recordAssetUses(trx, draft.id, DRAFT, names);
      await trx.updateTable('templates').set({ asset_uses_known: 1 }).where('id', '=', draft.id).execute();
    });
  }
  const versions = await db
    .selectFrom('template_versions as v')
    .innerJoin('templates as t', 't.id', 'v.template_id')
    .select(['v.template_id', 'v.version_number', 'v.html', 'v.css', 'v.page'])
    .where('t.account_id', '=', accountId)
    .where('v.asset_uses_known', '=', 0)
    .limit(Math.max(0, REFRESH_BATCH - drafts.length))
    .execute();
  for (const version of versions) {
    const names = assetUsesOf({ html: version.html, css: version.css, page: parsePage(version.page) });
    await withTransaction(db, async (trx) => {
      await recordAssetUses(trx, version.template_id, version.version_number, names);
      await trx
        .updateTable('template_versions')
        .set({ asset_uses_known: 1 })
        .where('template_id', '=', version.template_id)
        .where('version_number', '=', version.version_number)
        .execute();
    });
  }
}

function parsePage(page: string | null): AssetNamedParts['page'] {
  return page === null ? null : (JSON.parse(page) as PageSetup);
}

/** The account's uses of `names` (and of `*`): recorded rows, and `*` for drafts and versions not read yet. */
async function listUses(db: DbOrTx, accountId: string, names?: readonly string[]): Promise<AssetUseRow[]> {
  if (names !== undefined && names.length === 0) return [];
  let recorded = db
    .selectFrom('template_asset_uses as u')
    .innerJoin('templates as t', 't.id', 'u.template_id')
    .leftJoin('template_versions as v', (join) =>
      join.onRef('v.template_id', '=', 'u.template_id').onRef('v.version_number', '=', 'u.version_number'),
    )
    .select([
      't.id as templateId',
      't.name as templateName',
      'u.version_number as versionNumber',
      'v.tag',
      'v.asset_seq as assetSeq',
      'u.name',
    ])
    .where('t.account_id', '=', accountId)
    .where((eb) => eb.or([eb('u.version_number', '=', DRAFT), eb('v.version_number', 'is not', null)]));
  if (names !== undefined)
    recorded = recorded.where((eb) => eb.or([eb('u.name', 'in', [...names]), eb('u.name', '=', ANY_ASSET)]));
  const unreadVersions = await db
    .selectFrom('template_versions as v')
    .innerJoin('templates as t', 't.id', 'v.template_id')
    .select([
      't.id as templateId',
      't.name as templateName',
      'v.version_number as versionNumber',
      'v.tag',
      'v.asset_seq as assetSeq',
    ])
    .where('t.account_id', '=', accountId)
    .where('v.asset_uses_known', '=', 0)
    .execute();
  const unreadDrafts = await db
    .selectFrom('templates')
    .select(['id as templateId', 'name as templateName'])
    .where('account_id', '=', accountId)
    .where('asset_uses_known', '=', 0)
    .execute();
  return [
    ...(await recorded.execute()).map((r) => ({
      ...r,
      versionNumber: Number(r.versionNumber),
      assetSeq: Number(r.assetSeq ?? 0),
      tag: r.tag ?? null,
    })),
    ...unreadVersions.map((r) => ({
      ...r,
      versionNumber: Number(r.versionNumber),
      assetSeq: Number(r.assetSeq),
      name: ANY_ASSET,
    })),
    ...unreadDrafts.map((r) => ({ ...r, versionNumber: DRAFT, tag: null, assetSeq: 0, name: ANY_ASSET })),
  ];
}

/** The asset library's view of templates (wired in services.ts). */
export function createAssetUseSource(db: Db): AssetUseSource {
  return { refresh: (accountId) => refresh(db, accountId), list: listUses };
}
