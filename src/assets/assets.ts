/**
 * The asset library (issue 13): logos, fonts and stylesheets an account uploads once and its
 * templates use through `{{ asset('name') }}`. Bytes live in the blob store (`assets/<account>/<key>`,
 * a fresh key per upload), so every process of an installation sees the same assets; the metadata
 * is a row per account and name pointing at its current revision, and a row per kept revision.
 * Free of charge.
 *
 * An upload under an existing name adds a revision (issue 50, asset-revisions.ts): the draft prints
 * the newest, a published version the revisions it was published with. A revision no version prints
 * any more is pruned. Rendering reads through `readForRender`: the rows (the truth, shared by all
 * processes) name the storage key, and the bytes are kept in memory by that key — one per revision
 * and account, whose content never changes — so a new revision is never served from a stale cache.
 */
import { createHash } from 'node:crypto';
import { withTransaction, type Db, type Dialect, type Tx } from '../db/database.js';
import type { AssetRevisionsTable } from '../db/schema.js';
import { AppError, ValidationError } from '../shared/errors.js';
import { randomId } from '../shared/ids.js';
import type { Logger } from '../shared/log.js';
import type { BlobStore, StoredBlob } from '../storage/blob-store.js';
import {
  byName,
  unpinnedRevisions,
  usesByName,
  versionPins,
  type AssetPin,
  type AssetUseRow,
  type AssetUseSource,
} from './asset-revisions.js';
import { ASSET_CONTENT_TYPES, sniffAssetType, type AssetContentType } from './asset-types.js';
import {
  assetInfo,
  assetUsers,
  revisionInfos,
  type AssetDetail,
  type ListedAsset,
  type UploadedAsset,
} from './asset-views.js';
import { ByteBudgetCache } from './byte-budget-cache.js';
import * as store from './assets-store.js';

export type { AssetDetail, AssetInfo, ListedAsset, UploadedAsset } from './asset-views.js';

/** An upload: the bytes, their name, and optionally the type the client believes they have. */
export interface AssetUpload {
  name: string;
  bytes: Buffer;
  /** Checked against the bytes when given; the bytes decide. */
  contentType?: string | null;
  /** Where the name came from, for error locations (`['body', 'name']`). */
  nameLoc?: (string | number)[];
  fileLoc?: (string | number)[];
}

/** Largest asset: a font family or a full-page image; the upload is held in memory while it is checked. */
export const ASSET_MAX_BYTES = 10 * 1024 * 1024;

/** Asset bytes kept in memory per process for rendering: the logos and fonts of the busy templates. */
export const ASSET_CACHE_BYTES = 64 * 1024 * 1024;

/** Versions named in a refused delete's message; the rest are counted. */
const NAMED_IN_MESSAGE = 5;

export interface AssetLimits {
  maxBytes: number;
  accountMaxBytes: number;
  cacheBytes: number;
}

export interface AssetService {
  /** Stores a new revision of the name (its first, or the next); 422 for a bad name or type, 413 past a size limit. */
  put(accountId: string, upload: AssetUpload): Promise<UploadedAsset>;
  /** The account's names with their current revisions and users. */
  list(accountId: string): Promise<ListedAsset[]>;
  /** The name, its kept revisions and who prints which; NOT_FOUND when the account has no such name. */
  describe(accountId: string, name: string): Promise<AssetDetail>;
  /** The bytes of the current revision, or of `revision`; NOT_FOUND when there is none. */
  read(
    accountId: string,
    name: string,
    revision?: number,
  ): Promise<{ contentType: string; sha256: string; body: Buffer }>;
  /** Deletes the name and its revisions; NOT_FOUND when there is none, ASSET_IN_USE while a published version prints one. */
  remove(accountId: string, name: string): Promise<void>;
  /** Deletes the revisions no version prints any more (after versions went); never throws. */
  pruneUnpinned(accountId: string): Promise<void>;
  /**
   * For rendering: the bytes and type of the account's asset `name` — its current revision, or, with
   * a version's `pin`, the revision the version was published with — or undefined. Cached by storage key.
   */
  readForRender(
    accountId: string,
    name: string,
    pin?: AssetPin | null,
  ): Promise<{ body: Buffer; contentType: string } | undefined>;
}

/** 1–200 characters of letters, digits, `.`, `_`, `-`, `/`; `/`-separated segments, none empty, `.` or `..`. */
const NAME_PATTERN = /^[A-Za-z0-9._\-/]{1,200}$/;
export const ASSET_NAME_RULE =
  '1-200 characters of letters, digits, ".", "_", "-" and "/", no leading or trailing "/", no empty, "." or ".." segments';

/** Why `name` is not an asset name, or undefined when it is one. */
export function assetNameProblem(name: string): string | undefined {
  if (!NAME_PATTERN.test(name)) return `Asset names are ${ASSET_NAME_RULE}`;
  if (name.split('/').some((segment) => segment === '' || segment === '.' || segment === '..'))
    return `Asset names are ${ASSET_NAME_RULE}`;
  return undefined;
}

async function toBuffer(body: StoredBlob['body']): Promise<Buffer> {
  if (Buffer.isBuffer(body)) return body;
  const chunks: Buffer[] = [];
  for await (const chunk of body as AsyncIterable<Buffer>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

function mib(bytes: number): string {
  return `${Math.round((bytes / (1024 * 1024)) * 10) / 10} MiB`;
}

/** The upload's type, read from its bytes; 422 for a bad name, an empty file or another type, 413 past the size bound. */
function checkedType(upload: AssetUpload, maxBytes: number): AssetContentType {
  const problem = assetNameProblem(upload.name);
  if (problem)
    throw new ValidationError([{ loc: upload.nameLoc ?? ['body', 'name'], msg: problem, type: 'value_error' }]);
  const fileLoc = upload.fileLoc ?? ['body', 'file'];
  if (upload.bytes.length === 0)
    throw new ValidationError([{ loc: fileLoc, msg: 'The file is empty', type: 'value_error' }]);
  if (upload.bytes.length > maxBytes) {
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      `The asset is ${upload.bytes.length} bytes; assets may be at most ${maxBytes} bytes (${mib(maxBytes)}).`,
    );
  }
  const contentType = sniffAssetType(upload.bytes);
  if (!contentType) {
    throw new ValidationError([
      {
        loc: fileLoc,
        msg: `The file is not one of the asset types (${ASSET_CONTENT_TYPES.join(', ')}); the type is read from the bytes, not the name`,
        type: 'value_error',
      },
    ]);
  }
  const declared = upload.contentType?.split(';')[0]?.trim().toLowerCase();
  if (
    declared &&
    declared !== contentType &&
    !(declared === 'image/jpg' && contentType === 'image/jpeg') &&
    !(declared === 'application/octet-stream')
  ) {
    throw new ValidationError([
      {
        loc: upload.nameLoc ? [...upload.nameLoc.slice(0, -1), 'content_type'] : ['body', 'content_type'],
        msg: `content_type says ${declared} but the bytes are ${contentType}`,
        type: 'value_error',
      },
    ]);
  }
  return contentType;
}

const sha256Of = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

function notFound(name: string): AppError {
  return new AppError('NOT_FOUND', `No asset named "${name}" in this account; GET /v1/assets lists them.`);
}

/** "Branded v1 (template abc), …": the versions a refusal names, the rest counted. */
function versionList(pins: { use: AssetUseRow }[]): string {
  const named = pins
    .slice(0, NAMED_IN_MESSAGE)
    .map(({ use }) => `"${use.templateName}" ${use.tag ?? use.versionNumber} (template ${use.templateId})`);
  const more = pins.length - named.length;
  return more > 0 ? `${named.join(', ')} and ${more} more` : named.join(', ');
}

export function createAssetService(deps: {
  db: Db;
  dialect: Dialect;
  blobs: BlobStore;
  limits: AssetLimits;
  uses: AssetUseSource;
  logger: Logger;
}): AssetService {
  const { db, dialect, blobs, limits, uses, logger } = deps;
  const cache = new ByteBudgetCache<{ body: Buffer; contentType: string }>(limits.cacheBytes);

  async function loadBytes(
    row: Pick<AssetRevisionsTable, 'storage_key' | 'content_type'>,
  ): Promise<Buffer | undefined> {
    const cached = cache.get(row.storage_key);
    if (cached) return cached.body;
    const blob = await blobs.get(row.storage_key);
    if (!blob) return undefined;
    const body = await toBuffer(blob.body);
    cache.set(row.storage_key, { body, contentType: row.content_type }, body.length);
    return body;
  }

  function deleteBlobs(keys: readonly string[]): Promise<unknown> {
    return Promise.all(
      keys.map((key) =>
        blobs
          .delete(key)
          .catch((error: unknown) => logger.warn({ err: error, key }, "could not delete an asset revision's bytes")),
      ),
    );
  }

  /** 413 when `size` more bytes would take the account's kept revisions (`used`) past its quota; `pinned`: how many are earlier revisions, for the message. */
  async function checkQuota(used: number, size: number, pinned: () => Promise<number>): Promise<void> {
    if (used + size <= limits.accountMaxBytes) return;
    const pinnedBytes = await pinned();
    const kept =
      pinnedBytes > 0 ? `, ${pinnedBytes} of them earlier revisions that published versions still print` : '';
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      `This account's assets would take ${used + size} bytes${kept}; the limit is ${limits.accountMaxBytes} bytes (${mib(limits.accountMaxBytes)}, PRESSROOM_ASSET_ACCOUNT_MAX_BYTES). Delete assets, or versions you no longer use (their earlier revisions go with them). Nothing was stored.`,
    );
  }

  /** In `trx` (the account's assets locked): deletes the revisions no version prints; returns their storage keys. */
  async function pruneIn(trx: Tx, accountId: string): Promise<string[]> {
    const earlier = await store.listEarlierRevisions(trx, accountId);
    if (earlier.length === 0) return [];
    const names = [...new Set(earlier.map((r) => r.name))];
    // Each name's whole list (its current revision included): what a version pins depends on the next one.
    const revisions = await store.listRevisions(trx, accountId, names);
    const earlierKeys = new Set(earlier.map((r) => `${r.name}#${r.revision}`));
    const current = new Map(
      revisions.filter((r) => !earlierKeys.has(`${r.name}#${r.revision}`)).map((r) => [r.name, r.revision]),
    );
    const unpinned = unpinnedRevisions(revisions, current, await uses.list(trx, accountId, names));
    for (const r of unpinned) await store.deleteRevision(trx, accountId, r.name, r.revision);
    return unpinned.map((r) => r.storage_key);
  }

  /** Bytes of the non-current revisions the account keeps for its versions. */
  async function pinnedBytes(trx: Tx, accountId: string): Promise<number> {
    return (await store.listEarlierRevisions(trx, accountId)).reduce((sum, r) => sum + Number(r.size), 0);
  }

  async function storeRevision(
    accountId: string,
    upload: AssetUpload,
    contentType: AssetContentType,
  ): Promise<{ revision: AssetRevisionsTable; replaced: boolean; removed: string[] }> {
    const now = Date.now();
    const storageKey = `assets/${accountId}/${randomId(24)}`;
    try {
      await blobs.put(storageKey, upload.bytes, { contentType });
    } catch (error) {
      throw new AppError('STORAGE_ERROR', 'The asset could not be stored; retry the request.', { cause: error });
    }
    try {
      // The check that counts: in one transaction with the insert, the account's assets locked.
      return await withTransaction(db, async (trx) => {
        await store.lockAccountAssets(trx, dialect, accountId);
        const previous = await store.findAsset(trx, accountId, upload.name);
        const revision: AssetRevisionsTable = {
          account_id: accountId,
          name: upload.name,
          revision: (previous?.revision ?? 0) + 1,
          seq: await store.nextSeq(trx, accountId),
          content_type: contentType,
          size: upload.bytes.length,
          sha256: sha256Of(upload.bytes),
          storage_key: storageKey,
          created_at: now,
        };
        await store.insertRevision(trx, revision);
        await store.setCurrentRevision(trx, accountId, upload.name, revision.revision, now);
        const removed = await pruneIn(trx, accountId);
        const total = await store.accountBytes(trx, accountId);
        await checkQuota(total - revision.size, revision.size, () => pinnedBytes(trx, accountId));
        return { revision, replaced: previous !== undefined, removed };
      });
    } catch (error) {
      await blobs.delete(storageKey).catch(() => {});
      throw error;
    }
  }

  async function listed(
    accountId: string,
    name: string,
  ): Promise<{ row: store.CurrentAsset; revisions: AssetRevisionsTable[]; item: ListedAsset }> {
    const row = await store.findAsset(db, accountId, name);
    if (!row) throw notFound(name);
    const revisions = await store.listRevisions(db, accountId, name);
    return {
      row,
      revisions,
      item: { ...assetInfo(row), used_by: assetUsers(name, revisions, await uses.list(db, accountId, [name])) },
    };
  }

  return {
    async put(accountId, upload) {
      const contentType = checkedType(upload, limits.maxBytes);
      await uses.refresh(accountId);
      // The very bytes the name has already (a retry, the same file dropped twice): no new revision.
      const same = await store.findAsset(db, accountId, upload.name);
      if (same && same.content_type === contentType && same.sha256 === sha256Of(upload.bytes))
        return { ...(await listed(accountId, upload.name)).item, replaced: false };
      // A first look before the bytes are stored, so an upload plainly over the quota stores nothing:
      // the name's current revision may be pruned when no version prints it, so it is not counted here.
      await checkQuota(
        (await store.accountBytes(db, accountId)) - Number(same?.size ?? 0),
        upload.bytes.length,
        async () => 0,
      );
      const { replaced, removed } = await storeRevision(accountId, upload, contentType);
      // The old bytes go after the rows point at the new ones; a render in between still finds either.
      await deleteBlobs(removed);
      return { ...(await listed(accountId, upload.name)).item, replaced };
    },

    async list(accountId) {
      await uses.refresh(accountId);
      const [rows, revisions, usesOf] = [
        await store.listAssets(db, accountId),
        byName(await store.listRevisions(db, accountId)),
        usesByName(await uses.list(db, accountId)),
      ];
      return rows.map((row) => ({
        ...assetInfo(row),
        used_by: assetUsers(row.name, revisions.get(row.name) ?? [], usesOf(row.name)),
      }));
    },

    async describe(accountId, name) {
      await uses.refresh(accountId);
      const { row, revisions, item } = await listed(accountId, name);
      return { ...item, revisions: revisionInfos(revisions, Number(row.revision), item.used_by) };
    },

    async read(accountId, name, revision) {
      const row =
        revision === undefined
          ? await store.findAsset(db, accountId, name)
          : await store.findRevision(db, accountId, name, revision);
      const body = row ? await loadBytes(row) : undefined;
      if (!row || !body) {
        if (revision === undefined || !(await store.findAsset(db, accountId, name))) throw notFound(name);
        throw new AppError(
          'NOT_FOUND',
          `The asset "${name}" has no revision ${revision}; its revisions are listed by GET /v1/assets/${name} with Accept: application/json.`,
        );
      }
      return { contentType: row.content_type, sha256: row.sha256, body };
    },

    async remove(accountId, name) {
      await uses.refresh(accountId);
      const removed = await withTransaction(db, async (trx) => {
        await store.lockAccountAssets(trx, dialect, accountId);
        if (!(await store.findAsset(trx, accountId, name))) throw notFound(name);
        const pruned = await pruneIn(trx, accountId);
        const revisions = await store.listRevisions(trx, accountId, name);
        const pins = versionPins(name, revisions, await uses.list(trx, accountId, [name]));
        if (pins.length > 0) {
          throw new AppError(
            'ASSET_IN_USE',
            `"${name}" is printed by ${pins.length === 1 ? 'a published version' : `${pins.length} published versions`}: ${versionList(pins)}. A version prints the files it was published with, so the asset stays while one uses it. Delete those versions first, or upload a new file under this name (drafts print the newest). Nothing was deleted.`,
          );
        }
        await store.deleteAsset(trx, accountId, name);
        return [...pruned, ...revisions.map((r) => r.storage_key)];
      });
      await deleteBlobs(removed);
    },

    async pruneUnpinned(accountId) {
      try {
        const removed = await withTransaction(db, async (trx) => {
          await store.lockAccountAssets(trx, dialect, accountId);
          return pruneIn(trx, accountId);
        });
        await deleteBlobs(removed);
      } catch (error) {
        // The next upload of the account prunes again; a failure here loses nothing.
        logger.warn({ err: error, accountId }, 'could not prune asset revisions');
      }
    },

    async readForRender(accountId, name, pin) {
      if (assetNameProblem(name)) return undefined;
      if (pin && pin.names !== 'all' && !pin.names.includes(name)) return undefined;
      const row = pin
        ? await store.findRevisionAt(db, accountId, name, pin.seq)
        : await store.findAsset(db, accountId, name);
      if (!row) return undefined;
      const body = await loadBytes(row);
      return body ? { body, contentType: row.content_type } : undefined;
    },
  };
}
