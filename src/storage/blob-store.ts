/**
 * Where generated PDFs live: local disk by default, S3 (or any S3-compatible store) at scale.
 * Both implementations pass the same contract suite (`blob-store.contract.ts`); `open-blob-store.ts`
 * opens the one a URL names.
 */
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
