/**
 * Generated files and their download links. A PDF (or image) delivered as `export_type=url` is stored in
 * the BlobStore under `<account>/<file id>.pdf` (`.png`, `.jpg`, `.webp`), with its media type, and a row
 * that records when it expires:
 * - local storage: the link is `/v1/files/<id>/<name>.pdf?expires=…&signature=…`, HMAC-signed with the
 *   server secret; expired or tampered links answer 403;
 * - S3 storage (the CDN at scale): the link is a presigned GET URL of the bucket.
 * A sweep deletes expired files and their rows.
 */
import type { Db } from '../db/database.js';
import { bodySize, type BlobBody, type BlobStore, type StoredBlob } from '../storage/blob-store.js';
import { downloadLinkKey, signDownload, verifyDownload } from '../storage/signed-link.js';
import { AppError } from '../shared/errors.js';
import { newFileId } from '../shared/ids.js';
import type { Logger } from '../shared/log.js';
import * as store from './files-store.js';

export interface StoredFile {
  fileId: string;
  url: string;
  filename: string;
  expiresAt: number;
}

/** Storage-key extension per media type; the download answers with the stored media type. */
const EXTENSIONS: Record<string, string> = {
  'application/pdf': 'pdf',
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/webp': 'webp',
  'application/zip': 'zip',
};

export interface FileService {
  /** Stores a document (a PDF unless `contentType` says otherwise) for download for `expiresInSeconds` and returns its signed link. */
  store(
    accountId: string,
    pdf: BlobBody,
    filename: string,
    expiresInSeconds: number,
    contentType?: string,
  ): Promise<StoredFile>;
  /** A fresh link for an already stored file (idempotent replays). */
  link(fileId: string): Promise<StoredFile | null>;
  /** Checks a local download link and opens the file. */
  open(
    fileId: string,
    filename: string,
    expires: string,
    signature: string,
  ): Promise<{ blob: StoredBlob; filename: string }>;
  /** Reads a stored PDF (binary idempotent replays). */
  read(fileId: string): Promise<Buffer | null>;
  /** Deletes files whose time is up; returns how many. */
  sweep(): Promise<number>;
}

async function toBuffer(body: StoredBlob['body']): Promise<Buffer> {
  if (Buffer.isBuffer(body)) return body;
  const chunks: Buffer[] = [];
  for await (const chunk of body as AsyncIterable<Buffer>) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks);
}

export function createFileService(deps: {
  db: Db;
  blobs: BlobStore;
  publicUrl: string;
  secretKey: string;
  logger: Logger;
}): FileService {
  const { db, blobs, publicUrl, logger } = deps;
  const key = downloadLinkKey(deps.secretKey);

  async function urlFor(row: {
    id: string;
    storage_key: string;
    filename: string;
    expires_at: number;
  }): Promise<string> {
    const seconds = Math.max(1, Math.round((row.expires_at - Date.now()) / 1000));
    const presigned = await blobs.presignedGetUrl(row.storage_key, seconds, row.filename);
    if (presigned) return presigned;
    const params = signDownload({ fileId: row.id, filename: row.filename, expiresAt: new Date(row.expires_at) }, key);
    return `${publicUrl}/v1/files/${row.id}/${encodeURIComponent(row.filename)}?expires=${params.expires}&signature=${params.signature}`;
  }

  return {
    async store(accountId, pdf, filename, expiresInSeconds, contentType = 'application/pdf') {
      const fileId = newFileId();
      const storageKey = `${accountId}/${fileId}.${EXTENSIONS[contentType] ?? 'bin'}`;
      // Whole seconds (the signed link carries Unix seconds), rounded up so the link lasts at least as asked.
      const expiresAt = (Math.ceil(Date.now() / 1000) + expiresInSeconds) * 1000;
      try {
        await blobs.put(storageKey, pdf, { contentType });
      } catch (error) {
        throw new AppError('STORAGE_ERROR', 'The document could not be stored; retry the request.', { cause: error });
      }
      const row = {
        id: fileId,
        account_id: accountId,
        storage_key: storageKey,
        filename,
        size: bodySize(pdf),
        created_at: Date.now(),
        expires_at: expiresAt,
      };
      await store.insertFile(db, row);
      return { fileId, url: await urlFor(row), filename, expiresAt };
    },

    async link(fileId) {
      const row = await store.findFile(db, fileId);
      if (!row) return null;
      return { fileId, url: await urlFor(row), filename: row.filename, expiresAt: row.expires_at };
    },

    async open(fileId, filename, expires, signature) {
      const verdict = verifyDownload({ fileId, filename, expires, signature }, key);
      if (verdict === 'invalid') throw new AppError('LINK_INVALID', 'This download link is not valid.');
      if (verdict === 'expired')
        throw new AppError('LINK_EXPIRED', 'This download link has expired; generate the document again.');
      const row = await store.findFile(db, fileId);
      const blob = row ? await blobs.get(row.storage_key) : null;
      if (!row || !blob) throw new AppError('FILE_NOT_FOUND', 'The file behind this link no longer exists.');
      return { blob, filename: row.filename };
    },

    async read(fileId) {
      const row = await store.findFile(db, fileId);
      const blob = row ? await blobs.get(row.storage_key) : null;
      return blob ? toBuffer(blob.body) : null;
    },

    async sweep() {
      let removed = 0;
      for (;;) {
        const expired = await store.listExpiredFiles(db, Date.now(), 200);
        for (const row of expired) {
          try {
            await blobs.delete(row.storage_key);
            await store.deleteFileRow(db, row.id);
            removed++;
          } catch (error) {
            logger.warn({ err: error, fileId: row.id }, 'could not delete an expired file; will retry');
            return removed;
          }
        }
        if (expired.length < 200) return removed;
      }
    },
  };
}
