/**
 * The asset library (issue 13): logos, fonts and stylesheets an account uploads once and its
 * templates use through `{{ asset('name') }}`. Bytes live in the blob store (`assets/<account>/<key>`,
 * a fresh key per upload), so every process of an installation sees the same assets; the metadata
 * is a row per account and name. Free of charge.
 *
 * Rendering reads through `readForRender`: the row (the truth, shared by all processes) names the
 * storage key, and the bytes are kept in memory by that key, which never changes its content, so a
 * replaced or deleted asset is never served from a stale cache.
 */
import { createHash } from 'node:crypto';
import { withTransaction, type Db, type Dialect } from '../db/database.js';
import type { AssetsTable } from '../db/schema.js';
import { AppError, ValidationError } from '../shared/errors.js';
import { randomId } from '../shared/ids.js';
import type { Logger } from '../shared/log.js';
import type { BlobStore, StoredBlob } from '../storage/blob-store.js';
import { ASSET_CONTENT_TYPES, sniffAssetType } from './asset-types.js';
import { ByteBudgetCache } from './byte-budget-cache.js';
import * as store from './assets-store.js';

/** An asset as the API shows it. */
export interface AssetInfo {
  name: string;
  content_type: string;
  size: number;
  sha256: string;
  /** ISO 8601 */
  created_at: string;
  updated_at: string;
}

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

export interface AssetLimits {
  maxBytes: number;
  accountMaxBytes: number;
  cacheBytes: number;
}

export interface AssetService {
  /** Stores (or replaces) an asset; 422 for a bad name or type, 413 past a size limit. */
  put(accountId: string, upload: AssetUpload): Promise<AssetInfo>;
  list(accountId: string): Promise<AssetInfo[]>;
  /** The asset's bytes; NOT_FOUND when the account has none of that name. */
  read(accountId: string, name: string): Promise<{ info: AssetInfo; body: Buffer }>;
  /** Deletes it; NOT_FOUND when there is none. */
  remove(accountId: string, name: string): Promise<void>;
  /** For rendering: the bytes and type of the account's asset `name`, or undefined. Cached by storage key. */
  readForRender(accountId: string, name: string): Promise<{ body: Buffer; contentType: string } | undefined>;
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

function view(row: AssetsTable): AssetInfo {
  return {
    name: row.name,
    content_type: row.content_type,
    size: row.size,
    sha256: row.sha256,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
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

export function createAssetService(deps: {
  db: Db;
  dialect: Dialect;
  blobs: BlobStore;
  limits: AssetLimits;
  logger: Logger;
}): AssetService {
  const { db, dialect, blobs, limits, logger } = deps;
  const cache = new ByteBudgetCache<{ body: Buffer; contentType: string }>(limits.cacheBytes);

  async function loadBytes(row: AssetsTable): Promise<Buffer | undefined> {
    const cached = cache.get(row.storage_key);
    if (cached) return cached.body;
    const blob = await blobs.get(row.storage_key);
    if (!blob) return undefined;
    const body = await toBuffer(blob.body);
    cache.set(row.storage_key, { body, contentType: row.content_type }, body.length);
    return body;
  }

  /** 413 when `size` more bytes would take the account's assets (`used` without the one replaced) past its quota. */
  function checkQuota(used: number, size: number): void {
    if (used + size <= limits.accountMaxBytes) return;
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      `This account's assets would take ${used + size} bytes; the limit is ${limits.accountMaxBytes} bytes (${mib(limits.accountMaxBytes)}, PRESSROOM_ASSET_ACCOUNT_MAX_BYTES). Delete assets you no longer use.`,
    );
  }

  function notFound(name: string): AppError {
    return new AppError('NOT_FOUND', `No asset named "${name}" in this account; GET /v1/assets lists them.`);
  }

  return {
    async put(accountId, upload) {
      const problem = assetNameProblem(upload.name);
      if (problem)
        throw new ValidationError([{ loc: upload.nameLoc ?? ['body', 'name'], msg: problem, type: 'value_error' }]);
      const fileLoc = upload.fileLoc ?? ['body', 'file'];
      if (upload.bytes.length === 0)
        throw new ValidationError([{ loc: fileLoc, msg: 'The file is empty', type: 'value_error' }]);
      if (upload.bytes.length > limits.maxBytes) {
        throw new AppError(
          'PAYLOAD_TOO_LARGE',
          `The asset is ${upload.bytes.length} bytes; assets may be at most ${limits.maxBytes} bytes (${mib(limits.maxBytes)}).`,
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
      // A first look before the bytes are stored, so an upload plainly over the quota stores nothing.
      checkQuota(await store.accountBytes(db, accountId, upload.name), upload.bytes.length);
      const now = Date.now();
      const row: AssetsTable = {
        account_id: accountId,
        name: upload.name,
        content_type: contentType,
        size: upload.bytes.length,
        sha256: createHash('sha256').update(upload.bytes).digest('hex'),
        storage_key: `assets/${accountId}/${randomId(24)}`,
        created_at: now,
        updated_at: now,
      };
      try {
        await blobs.put(row.storage_key, upload.bytes, { contentType });
      } catch (error) {
        throw new AppError('STORAGE_ERROR', 'The asset could not be stored; retry the request.', { cause: error });
      }
      let previous: AssetsTable | undefined;
      try {
        // The check that counts: in one transaction with the insert, the account's assets locked.
        previous = await withTransaction(db, async (trx) => {
          await store.lockAccountAssets(trx, dialect, accountId);
          checkQuota(await store.accountBytes(trx, accountId, upload.name), upload.bytes.length);
          const replaced = await store.findAsset(trx, accountId, upload.name);
          await store.upsertAsset(trx, { ...row, created_at: replaced?.created_at ?? now });
          return replaced;
        });
      } catch (error) {
        await blobs.delete(row.storage_key).catch(() => {});
        throw error;
      }
      // The old bytes go after the row points at the new ones; a render in between still finds either.
      if (previous)
        await blobs
          .delete(previous.storage_key)
          .catch((error: unknown) =>
            logger.warn({ err: error, key: previous.storage_key }, 'could not delete a replaced asset'),
          );
      return view({ ...row, created_at: previous?.created_at ?? now });
    },

    async list(accountId) {
      return (await store.listAssets(db, accountId)).map(view);
    },

    async read(accountId, name) {
      const row = await store.findAsset(db, accountId, name);
      const body = row ? await loadBytes(row) : undefined;
      if (!row || !body) throw notFound(name);
      return { info: view(row), body };
    },

    async remove(accountId, name) {
      const row = await store.findAsset(db, accountId, name);
      if (!row || !(await store.deleteAsset(db, accountId, name))) throw notFound(name);
      await blobs
        .delete(row.storage_key)
        .catch((error: unknown) =>
          logger.warn({ err: error, key: row.storage_key }, "could not delete an asset's bytes"),
        );
    },

    async readForRender(accountId, name) {
      if (assetNameProblem(name)) return undefined;
      const row = await store.findAsset(db, accountId, name);
      if (!row) return undefined;
      const body = await loadBytes(row);
      return body ? { body, contentType: row.content_type } : undefined;
    },
  };
}
