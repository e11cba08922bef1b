/** Opens the blob store a storage URL names: local disk or S3 (blob-store.ts has the interface). */
import { fileURLToPath } from 'node:url';
import { isAbsolute } from 'node:path';
import type { BlobStore, CreateBlobStoreOptions } from './blob-store.js';
import { createLocalDiskStore } from './local-disk.js';
import { createS3BlobStore, parseS3StorageUrl } from './s3.js';

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
