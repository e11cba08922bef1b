import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startS3Server } from '../../test/support/s3-server.js';
import { describeBlobStoreContract } from './blob-store.contract.js';
import { createBlobStore } from './blob-store.js';
import { parseS3StorageUrl } from './s3.js';

const credentials = { accessKeyId: 'AKIAPRESSROOMSTORE01', secretAccessKey: 'pressroom-storage-secret-0123456789ab' };

describeBlobStoreContract('local disk', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'pressroom-blobs-'));
  const store = createBlobStore(pathToFileURL(dir).href);
  return {
    store,
    async close() {
      await store.close();
      // Atomic writes must not leave temp files behind.
      expect(await readdir(join(dir, '.tmp'))).toEqual([]);
      await rm(dir, { recursive: true, force: true });
    },
  };
});

describeBlobStoreContract('S3 (verifying loopback S3 server)', async () => {
  const server = await startS3Server({ ...credentials, buckets: ['pressroom-files'] });
  const query = new URLSearchParams({
    endpoint: server.endpoint,
    region: server.region,
    force_path_style: 'true',
    access_key_id: credentials.accessKeyId,
    secret_access_key: credentials.secretAccessKey,
  });
  const store = createBlobStore(`s3://pressroom-files/generated/?${query}`);
  return {
    store,
    async close() {
      // The prefix from the URL is really applied to keys.
      expect(await server.readObject('pressroom-files', 'generated/acc_a/same.pdf')).toEqual(Buffer.from('a'));
      await store.close();
      await server.stop();
    },
  };
});

describe('createBlobStore', () => {
  it('refuses other schemes', () => {
    expect(() => createBlobStore('http://example.com/files')).toThrow(/file:\/\/ or s3:\/\//);
  });
});

describe('parseS3StorageUrl', () => {
  it('reads bucket, prefix and options', () => {
    expect(parseS3StorageUrl('s3://files/pdfs/2024?endpoint=http://127.0.0.1:9000&region=eu-west-1&force_path_style=true')).toEqual({
      bucket: 'files',
      prefix: 'pdfs/2024/',
      endpoint: 'http://127.0.0.1:9000',
      region: 'eu-west-1',
      forcePathStyle: true,
      credentials: undefined,
    });
  });

  it('defaults to us-east-1, no prefix, virtual hosts on AWS and path style on custom endpoints', () => {
    expect(parseS3StorageUrl('s3://files')).toMatchObject({ prefix: '', region: 'us-east-1', forcePathStyle: false });
    expect(parseS3StorageUrl('s3://files/?endpoint=https://minio.internal')).toMatchObject({ prefix: '', forcePathStyle: true });
  });

  it('wants both halves of inline credentials', () => {
    expect(() => parseS3StorageUrl('s3://files?access_key_id=abc')).toThrow(/both/);
  });
});
