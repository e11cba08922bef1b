/**
 * BlobStore on the local filesystem (the default for a single machine).
 *
 * Layout under the root:
 *   <key>                 the bytes
 *   .meta/<key>.json      content type and disposition (a filesystem has nowhere else to keep them)
 *   .tmp/<uuid>           writes in progress
 * A put writes to .tmp, syncs, then renames into place: rename within one filesystem is atomic, so
 * a reader sees the old file or the new one, never half of one. Keys cannot start a segment with
 * a dot (storage-key.ts), so they can never collide with .meta or .tmp.
 */
import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { copyFile, mkdir, open, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { AppError } from '../shared/errors.js';
import type { BlobStore, PutOptions, StoredBlob } from './blob-store.js';
import type { BlobBody } from './blob-body.js';
import { assertValidKey } from './storage-key.js';
import type { SpooledFile } from '../pdf/spool.js';

interface Metadata {
  contentType: string;
  contentDisposition?: string;
}

/** Opens a local-disk store rooted at the absolute directory `rootDir` (created on first write). */
export function createLocalDiskStore(rootDir: string): BlobStore {
  const root = resolve(rootDir);
  const tmpDir = join(root, '.tmp');

  /** Maps a key to its file, re-checking containment in case the key rules ever loosen. */
  function pathFor(base: string, key: string, suffix = ''): string {
    assertValidKey(key);
    const path = resolve(base, `${key}${suffix}`);
    const rel = relative(base, path);
    if (rel === '' || rel.startsWith(`..${sep}`) || rel === '..' || resolve(base, rel) !== path) {
      throw new AppError('STORAGE_ERROR', 'Internal storage key is malformed', {
        cause: new Error(`key escapes the root: ${key}`),
      });
    }
    return path;
  }
  const dataPath = (key: string) => pathFor(root, key);
  const metaPath = (key: string) => pathFor(join(root, '.meta'), key, '.json');

  async function writeAtomically(target: string, bytes: BlobBody | string): Promise<void> {
    await mkdir(tmpDir, { recursive: true, mode: 0o700 });
    await mkdir(dirname(target), { recursive: true, mode: 0o700 });
    const tmp = join(tmpDir, randomUUID());
    try {
      const inMemory = typeof bytes === 'string' || Buffer.isBuffer(bytes) ? bytes : undefined;
      // A spooled file is copied by the kernel (copy_file_range), never read into memory.
      if (!inMemory) await copyFile((bytes as SpooledFile).path, tmp, constants.COPYFILE_EXCL);
      const handle = await open(tmp, inMemory ? 'wx' : 'r+', 0o600);
      try {
        if (inMemory) await handle.writeFile(inMemory);
        await handle.datasync(); // a link may be handed out right after put: the bytes must survive a crash
      } finally {
        await handle.close();
      }
      await rename(tmp, target);
    } catch (error) {
      await rm(tmp, { force: true });
      throw error;
    }
  }

  async function readMetadata(key: string): Promise<Metadata | undefined> {
    try {
      return JSON.parse(await readFile(metaPath(key), 'utf8')) as Metadata;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  return {
    kind: 'local',

    async put(key: string, body: BlobBody, opts: PutOptions): Promise<void> {
      const target = dataPath(key);
      const metadata: Metadata = { contentType: opts.contentType, contentDisposition: opts.contentDisposition };
      try {
        // Metadata first: a visible file then always has metadata (its own, or its predecessor's).
        await writeAtomically(metaPath(key), JSON.stringify(metadata));
        await writeAtomically(target, body);
      } catch (error) {
        throw storageError('write', error);
      }
    },

    async get(key: string): Promise<StoredBlob | null> {
      const path = dataPath(key);
      try {
        // Open first, then stat the handle: the bytes we stream are the bytes we measured, even
        // if a put renames a new file into place meanwhile.
        const handle = await open(path, 'r');
        try {
          const { size } = await handle.stat();
          const metadata = await readMetadata(key);
          return { body: handle.createReadStream(), size, contentType: metadata?.contentType };
        } catch (error) {
          await handle.close();
          throw error;
        }
      } catch (error) {
        if (isNotFound(error)) return null;
        throw storageError('read', error);
      }
    },

    async delete(key: string): Promise<void> {
      try {
        await rm(dataPath(key), { force: true });
        await rm(metaPath(key), { force: true });
      } catch (error) {
        throw storageError('delete', error);
      }
    },

    async presignedGetUrl(key: string): Promise<string | null> {
      assertValidKey(key);
      return null;
    },

    async close(): Promise<void> {},
  };
}

function isNotFound(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

function storageError(action: 'read' | 'write' | 'delete', cause: unknown): unknown {
  if (cause instanceof AppError) return cause;
  return new AppError('STORAGE_ERROR', `Could not ${action} the file in local storage`, { cause });
}
