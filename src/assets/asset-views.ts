/** The asset library as the API shows it: a name, its revisions, and the templates and versions that use them. */
import type { AssetRevisionsTable } from '../db/schema.js';
import { ANY_ASSET, versionPins, type AssetUseRow } from './asset-revisions.js';
import type { CurrentAsset } from './assets-store.js';

/** An asset name with its current revision (what the draft prints). */
export interface AssetInfo {
  name: string;
  content_type: string;
  size: number;
  sha256: string;
  /** ISO 8601: the first upload under this name. */
  created_at: string;
  /** The last upload under this name. */
  updated_at: string;
  /** The current revision's number (1, 2, 3… per name). */
  revision: number;
}

/** A template using an asset name: through its draft, its versions, or both. */
export interface AssetUser {
  template_id: string;
  template_name: string;
  /** The draft names it: it prints the current revision. */
  draft: boolean;
  /** Versions that print a revision of it, and which. */
  versions: { version_number: number; tag: string; revision: number }[];
  /** The template computes asset names (`asset(data.logo)`), so it may use this one: it is listed for every name. */
  computed: boolean;
}

export interface ListedAsset extends AssetInfo {
  used_by: AssetUser[];
}

/** The answer of an upload: whether it replaced a current revision (the old one stays while versions print it). */
export interface UploadedAsset extends ListedAsset {
  replaced: boolean;
}

export interface AssetRevisionInfo {
  revision: number;
  content_type: string;
  size: number;
  sha256: string;
  created_at: string;
  /** The revision the draft prints. */
  current: boolean;
  /** The published versions that print this revision. */
  used_by: { template_id: string; template_name: string; version_number: number; tag: string }[];
}

/** `GET /v1/assets/{name}` as JSON: the name, every kept revision, and who uses what. */
export interface AssetDetail extends ListedAsset {
  revisions: AssetRevisionInfo[];
}

const iso = (ms: number) => new Date(Number(ms)).toISOString();

export function assetInfo(row: CurrentAsset): AssetInfo {
  return {
    name: row.name,
    content_type: row.content_type,
    size: Number(row.size),
    sha256: row.sha256,
    created_at: iso(row.name_created_at),
    updated_at: iso(row.updated_at),
    revision: Number(row.revision),
  };
}

/** The templates using `name` (`revisions` of it ascending by seq), by template name. */
export function assetUsers(
  name: string,
  revisions: readonly AssetRevisionsTable[],
  uses: readonly AssetUseRow[],
): AssetUser[] {
  const users = new Map<string, AssetUser>();
  const userOf = (use: AssetUseRow): AssetUser => {
    let user = users.get(use.templateId);
    if (!user)
      users.set(
        use.templateId,
        (user = {
          template_id: use.templateId,
          template_name: use.templateName,
          draft: false,
          versions: [],
          computed: false,
        }),
      );
    if (use.name === ANY_ASSET) user.computed = true;
    return user;
  };
  for (const use of uses)
    if (use.versionNumber === 0 && (use.name === name || use.name === ANY_ASSET)) userOf(use).draft = true;
  for (const { use, revision } of versionPins(name, revisions, uses))
    userOf(use).versions.push({ version_number: use.versionNumber, tag: use.tag ?? '', revision: revision.revision });
  for (const user of users.values()) user.versions.sort((a, b) => a.version_number - b.version_number);
  return [...users.values()].sort(
    (a, b) => a.template_name.localeCompare(b.template_name) || a.template_id.localeCompare(b.template_id),
  );
}

/** Every kept revision of `name`, newest first, with the versions that print each. */
export function revisionInfos(
  revisions: readonly AssetRevisionsTable[],
  current: number,
  users: readonly AssetUser[],
): AssetRevisionInfo[] {
  return [...revisions]
    .sort((a, b) => b.revision - a.revision)
    .map((r) => ({
      revision: r.revision,
      content_type: r.content_type,
      size: Number(r.size),
      sha256: r.sha256,
      created_at: iso(r.created_at),
      current: r.revision === current,
      used_by: users.flatMap((user) =>
        user.versions
          .filter((v) => v.revision === r.revision)
          .map((v) => ({
            template_id: user.template_id,
            template_name: user.template_name,
            version_number: v.version_number,
            tag: v.tag,
          })),
      ),
    }));
}
