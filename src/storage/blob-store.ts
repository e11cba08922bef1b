/**
 * Where generated PDFs live: local disk by default, S3 (or any S3-compatible store) at scale.
 * Both implementations pass the same contract suite (`blob-store.contract.ts`).
 */
import { fileURLToPath } from 'node:url';
import { isAbsolute } from 'node:path';
import { createLocalDiskStore } from './local-disk.js';
import { createS3BlobStore, parseS3StorageUrl } from './s3.js';
import type { BlobBody } from './blob-body.js';

export { bodyBytes, bodySize, type BlobBody } from './blob-body.js';

/** A stored object as read back. */
export interface StoredBlob {
  /** A stream the caller must consume or destroy (it holds a file handle or socket until then). */
  readonly body: NodeJS.ReadableStream | Buffer;
  readonly size: number;
  readonly contentType?: string;
}

/** Options of a put. */
export interface PutOptions {
  readonly contentType: string;
  readonly contentDisposition?: string;
}

/** Key → bytes storage for generated files. Keys are `/`-separated [A-Za-z0-9._-] segments. */
export interface BlobStore {
  readonly kind: 'local' | 's3';
  /** Stores (or replaces) an object; readers see the old or the new bytes, never a partial file. */
  put(key: string, body: BlobBody, opts: PutOptions): Promise<void>;
  /** Reads an object; null when there is none. */
  get(key: string): Promise<StoredBlob | null>;
  /** Deletes an object; deleting a missing one is not an error. */
  delete(key: string): Promise<void>;
  /** S3 CDN storage returns a presigned GET URL; local storage returns null (the service signs its own /v1/files link). */
  presignedGetUrl(key: string, expiresInSeconds: number, filename: string): Promise<string | null>;
  /** Releases sockets and handles. */
  close(): Promise<void>;
}

/** Tuning for remote stores; ignored by local disk. */
export interface CreateBlobStoreOptions {
  /** TCP/TLS connect deadline. @defaultValue 5000 */
  readonly connectionTimeoutMs?: number;
  /** Socket inactivity deadline per request. @defaultValue 30000 */
  readonly requestTimeoutMs?: number;
  /** Attempts per S3 call, the first included. @defaultValue 3 */
  readonly maxAttempts?: number;
}

/**
 * Opens the store named by `url` (config `PRESSROOM_STORAGE_URL`):
 * `file:///abs/dir`, or `s3://bucket/prefix?endpoint=…&region=…&force_path_style=true`
 * (credentials from the standard AWS environment, or `access_key_id`/`secret_access_key` for tests).
 */
export function createBlobStore(url: string, opts: CreateBlobStoreOptions = {}): BlobStore {
  if (url.startsWith('file:')) {
    const root = fileURLToPath(url);
    if (!isAbsolute(root)) throw new Error(`PRESSROOM_STORAGE_URL must be an absolute file:/// URL; got ${url}`);
    return createLocalDiskStore(root);
  }
  if (url.startsWith('s3:')) return createS3BlobStore(parseS3StorageUrl(url), opts);
  throw new Error('PRESSROOM_STORAGE_URL must start with file:// or s3://');
}
