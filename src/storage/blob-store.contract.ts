/**
 * The one contract every BlobStore passes (STYLE habit 12). Run it from a `*.test.ts` file with a
 * factory that opens a fresh store; see blob-store.test.ts for the local and S3 runs.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { isAppError } from '../shared/errors.js';
import type { BlobStore, StoredBlob } from './blob-store.js';

/** A store under test and how to dispose of it. */
export interface BlobStoreFixture {
  readonly store: BlobStore;
  close(): Promise<void>;
}

/** Reads a stored body to the end, whichever form the store returned. */
export async function readAll(blob: StoredBlob): Promise<Buffer> {
  if (Buffer.isBuffer(blob.body)) return blob.body;
  const chunks: Buffer[] = [];
  for await (const chunk of blob.body) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks);
}

/** Registers the contract suite for one implementation. */
export function describeBlobStoreContract(name: string, open: () => Promise<BlobStoreFixture>): void {
  describe(`BlobStore contract: ${name}`, () => {
    let fixture: BlobStoreFixture;
    const store = () => fixture.store;
    beforeAll(async () => {
      fixture = await open();
    });
    afterAll(async () => {
      await fixture?.close();
    });

    it('returns the bytes, size and content type that were put', async () => {
      const body = randomBytes(150_000);
      await store().put('acc_1/round-trip.pdf', body, {
        contentType: 'application/pdf',
        contentDisposition: 'attachment; filename="x.pdf"',
      });
      const blob = await store().get('acc_1/round-trip.pdf');
      expect(blob).not.toBeNull();
      expect(blob!.size).toBe(body.length);
      expect(blob!.contentType).toBe('application/pdf');
      expect((await readAll(blob!)).equals(body)).toBe(true);
    });

    /** Puts a spooled file of `size` random bytes as `key` and checks what comes back and that the file is left as it was. */
    const putSpooledFile = async (key: string, size: number) => {
      const dir = await mkdtemp(join(tmpdir(), 'pressroom-contract-'));
      try {
        const body = randomBytes(size);
        const path = join(dir, 'spooled.pdf');
        await writeFile(path, body);
        await store().put(
          key,
          { path, size: body.length },
          { contentType: 'application/pdf', contentDisposition: 'attachment; filename="spooled.pdf"' },
        );
        const blob = await store().get(key);
        expect(blob!.size).toBe(body.length);
        expect(blob!.contentType).toBe('application/pdf');
        expect((await readAll(blob!)).equals(body)).toBe(true);
        expect((await readFile(path)).equals(body)).toBe(true);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    };

    it('stores a spooled file, streamed from disk, and leaves the file as it was', async () => {
      await putSpooledFile('acc_1/spooled.pdf', 3 * 1024 * 1024 + 17);
    });

    it('stores a spooled file too long for one upload whole (S3 takes it in parts)', async () => {
      // Above s3-put.ts MULTIPART_ABOVE_BYTES (16 MiB): three 8 MiB parts, the last a short one.
      await putSpooledFile('acc_1/spooled-long.pdf', 20 * 1024 * 1024 + 17);
    });

    it('replaces an object on a second put', async () => {
      await store().put('acc_1/replaced.pdf', Buffer.from('first version'), { contentType: 'application/pdf' });
      await store().put('acc_1/replaced.pdf', Buffer.from('second'), { contentType: 'text/plain' });
      const blob = await store().get('acc_1/replaced.pdf');
      expect((await readAll(blob!)).toString()).toBe('second');
      expect(blob!.contentType).toBe('text/plain');
    });

    it('keeps objects of different prefixes apart', async () => {
      await store().put('acc_a/same.pdf', Buffer.from('a'), { contentType: 'application/pdf' });
      await store().put('acc_b/same.pdf', Buffer.from('b'), { contentType: 'application/pdf' });
      expect((await readAll((await store().get('acc_a/same.pdf'))!)).toString()).toBe('a');
      expect((await readAll((await store().get('acc_b/same.pdf'))!)).toString()).toBe('b');
    });

    it('answers null for a missing key', async () => {
      expect(await store().get('acc_1/never-written.pdf')).toBeNull();
      expect(await store().get('no_such_prefix/at-all.pdf')).toBeNull();
    });

    it('deletes, and deleting a missing object is not an error', async () => {
      await store().put('acc_1/deleted.pdf', Buffer.from('bye'), { contentType: 'application/pdf' });
      await store().delete('acc_1/deleted.pdf');
      expect(await store().get('acc_1/deleted.pdf')).toBeNull();
      await expect(store().delete('acc_1/deleted.pdf')).resolves.toBeUndefined();
    });

    it.each([
      '../escape.pdf',
      'acc_1/../../escape.pdf',
      '/etc/passwd',
      'acc_1\\..\\x.pdf',
      'acc_1/x\0.pdf',
      'acc_1//x.pdf',
      '.meta/x.json',
      'acc_1/.hidden',
      '',
    ])('refuses the key %j', async (key) => {
      const put = store().put(key, Buffer.from('x'), { contentType: 'application/pdf' });
      await expect(put).rejects.toSatisfy((error: unknown) => isAppError(error, 'STORAGE_ERROR'));
      await expect(store().get(key)).rejects.toSatisfy((error: unknown) => isAppError(error, 'STORAGE_ERROR'));
    });

    it('presigns a GET URL on S3 (right bytes, type and filename; refused when tampered or expired), none locally', async () => {
      const body = randomBytes(20_000);
      await store().put('acc_1/presigned.pdf', body, { contentType: 'application/pdf' });
      const url = await store().presignedGetUrl('acc_1/presigned.pdf', 60, 'invoice-42.pdf');
      if (store().kind === 'local') {
        expect(url).toBeNull();
        return;
      }
      expect(url).toMatch(/^https?:\/\//);
      const res = await fetch(url!);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/pdf');
      expect(res.headers.get('content-disposition')).toBe(
        `attachment; filename="invoice-42.pdf"; filename*=UTF-8''invoice-42.pdf`,
      );
      expect(Buffer.from(await res.arrayBuffer()).equals(body)).toBe(true);

      const tampered = await fetch(url!.replace('presigned.pdf', 'round-trip.pdf'));
      expect(tampered.status).toBe(403);
      await tampered.body?.cancel();

      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.now() - 10 * 60 * 1000);
      const old = await store()
        .presignedGetUrl('acc_1/presigned.pdf', 60, 'invoice-42.pdf')
        .finally(() => vi.useRealTimers());
      const expired = await fetch(old!);
      expect(expired.status).toBe(403);
      await expired.body?.cancel();
    });
  });
}
