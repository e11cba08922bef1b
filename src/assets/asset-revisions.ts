/**
 * Asset revisions and what published versions pin (issue 50, docs/assets.md#revisions).
 *
 * Every upload under a name adds a revision (1, 2, 3…) and raises the account's asset counter; the
 * revision records the count (`seq`). A version records the count when it was published and prints,
 * of each name it uses, the newest revision at or before that count; the draft prints the newest.
 * A version "uses" the names its text gives `asset()` as literals, or every name when it computes one
 * (template-language/asset-names.ts). A revision is kept while it is current or a version pins it;
 * the others go (`unpinnedRevisions`). Pins are stable: a version's count is the counter when it was
 * published, read under the account's asset lock, so no later upload or prune can move it.
 */
import type { DbOrTx, Dialect, Tx } from '../db/database.js';
import type { AssetRevisionsTable } from '../db/schema.js';
import * as store from './assets-store.js';

/** Which revisions a render prints: a version's, fixed when it was published. Absent: the newest (the draft). */
export interface AssetPin {
  /** The account's asset counter when the version was published. */
  seq: number;
  /** The names the version uses; `all` when its text computes names (or was not read yet). */
  names: readonly string[] | 'all';
}

/** The name a use row gives for "every asset" (not an asset name: `*` is refused in names). */
export const ANY_ASSET = '*';

/** One use of asset names by a template's draft (`versionNumber` 0) or one of its versions. */
export interface AssetUseRow {
  templateId: string;
  templateName: string;
  /** 0 for the draft. */
  versionNumber: number;
  tag: string | null;
  /** The version's pin count (0 for the draft, which prints the newest). */
  assetSeq: number;
  /** An asset name, or ANY_ASSET. */
  name: string;
}

/**
 * Who uses which asset names: the templates' drafts and versions. Implemented by templates/
 * (template-asset-uses.ts) and handed to the asset service by the composition root, so the asset
 * library never imports the room above it.
 */
export interface AssetUseSource {
  /** Reads the names of templates and versions saved before names were recorded (a bounded number per call); outside any transaction. */
  refresh(accountId: string): Promise<void>;
  /** The account's uses of `names` (and of ANY_ASSET), every use when `names` is absent. */
  list(db: DbOrTx, accountId: string, names?: readonly string[]): Promise<AssetUseRow[]>;
}

/**
 * The count a version published now pins: under the account's asset lock (held to the end of
 * `trx`), so an upload or a prune either finishes before it or sees the version.
 */
export async function assetSeqForPublish(trx: Tx, dialect: Dialect, accountId: string): Promise<number> {
  await store.lockAccountAssets(trx, dialect, accountId);
  return store.currentSeq(trx, accountId);
}

type Revision = Pick<AssetRevisionsTable, 'name' | 'revision' | 'seq'>;

/** The revision a version pinned at `seq` prints: the newest at or before it (`revisions` ascending by seq). */
export function revisionAt<R extends Revision>(revisions: readonly R[], seq: number): R | undefined {
  let found: R | undefined;
  for (const revision of revisions) {
    if (Number(revision.seq) > seq) break;
    found = revision;
  }
  return found;
}

/** Revisions by name, each list ascending by seq. */
export function byName<R extends Revision>(revisions: readonly R[]): Map<string, R[]> {
  const map = new Map<string, R[]>();
  for (const revision of revisions) {
    const list = map.get(revision.name) ?? [];
    list.push(revision);
    map.set(revision.name, list);
  }
  for (const list of map.values()) list.sort((a, b) => Number(a.seq) - Number(b.seq));
  return map;
}

/** Each version use of `name` with the revision it prints (versions that pin none of it left out). */
export function versionPins<R extends Revision>(
  name: string,
  revisions: readonly R[],
  uses: readonly AssetUseRow[],
): { use: AssetUseRow; revision: R }[] {
  const pins: { use: AssetUseRow; revision: R }[] = [];
  for (const use of uses) {
    if (use.versionNumber === 0 || (use.name !== name && use.name !== ANY_ASSET)) continue;
    const revision = revisionAt(revisions, use.assetSeq);
    if (revision) pins.push({ use, revision });
  }
  return pins;
}

/** Uses by the name they give, so each name's users are found without reading every use (ANY_ASSET ones belong to every name). */
export function usesByName(uses: readonly AssetUseRow[]): (name: string) => AssetUseRow[] {
  const index = new Map<string, AssetUseRow[]>();
  for (const use of uses) {
    const list = index.get(use.name) ?? [];
    list.push(use);
    index.set(use.name, list);
  }
  const any = index.get(ANY_ASSET) ?? [];
  return (name) => [...(index.get(name) ?? []), ...any];
}

/** The revisions that are neither current (`current`: name → revision) nor pinned by a version. */
export function unpinnedRevisions<R extends Revision>(
  revisions: readonly R[],
  current: ReadonlyMap<string, number>,
  uses: readonly AssetUseRow[],
): R[] {
  const unpinned: R[] = [];
  const usesOf = usesByName(uses);
  for (const [name, list] of byName(revisions)) {
    if (list.length === 1 && list[0]!.revision === current.get(name)) continue;
    const pinned = new Set(versionPins(name, list, usesOf(name)).map((pin) => pin.revision.revision));
    for (const revision of list)
      if (revision.revision !== current.get(name) && !pinned.has(revision.revision)) unpinned.push(revision);
  }
  return unpinned;
}
