/**
 * BlobStore on S3 or an S3-compatible service, configured by the operator (trusted, so no outbound
 * guard here; customer buckets use createCustomerS3Client instead). Downloads are presigned GET
 * URLs, so bytes go from the bucket (or its CDN) to the customer without passing through us.
 */
import { DeleteObjectCommand, GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Readable } from 'node:stream';
import { AppError } from '../shared/errors.js';
import type { BlobStore, CreateBlobStoreOptions, PutOptions, StoredBlob } from './blob-store.js';
import type { BlobBody } from './blob-body.js';
import { attachmentDisposition } from './content-disposition.js';
import { createS3Client } from './s3-client.js';
import { putS3Object } from './s3-put.js';
import { assertValidKey } from './storage-key.js';

/** The parts of an `s3://bucket/prefix?…` storage URL. */
export interface S3StorageLocation {
  readonly bucket: string;
  /** Key prefix, empty or ending in `/`. */
  readonly prefix: string;
  readonly endpoint?: string;
  readonly region: string;
  readonly forcePathStyle: boolean;
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
}

/**
 * Parses `s3://bucket/prefix?endpoint=http://127.0.0.1:9000&region=us-east-1&force_path_style=true`
 * (plus `access_key_id` and `secret_access_key`, meant for tests; production uses the AWS environment).
 * Region defaults to us-east-1; path style defaults to on when an endpoint is given.
 */
export function parseS3StorageUrl(url: string): S3StorageLocation {
  const parsed = new URL(url);
  const bucket = parsed.hostname;
  if (parsed.protocol !== 's3:' || bucket === '') {
    throw new Error('PRESSROOM_STORAGE_URL must look like s3://bucket/prefix?region=…; the bucket is missing');
  }
  const params = parsed.searchParams;
  const prefix = decodeURIComponent(parsed.pathname).replace(/^\/+/, '').replace(/\/*$/, '/').replace(/^\/$/, '');
  const endpoint = params.get('endpoint') ?? undefined;
  const pathStyle = params.get('force_path_style');
  const accessKeyId = params.get('access_key_id');
  const secretAccessKey = params.get('secret_access_key');
  if ((accessKeyId === null) !== (secretAccessKey === null)) {
    throw new Error('PRESSROOM_STORAGE_URL: give both access_key_id and secret_access_key, or neither');
  }
  return {
    bucket,
    prefix,
    endpoint,
    region: params.get('region') ?? 'us-east-1',
    forcePathStyle: pathStyle === null ? endpoint !== undefined : pathStyle === 'true',
    credentials: accessKeyId !== null && secretAccessKey !== null ? { accessKeyId, secretAccessKey } : undefined,
  };
}

/** Opens an S3 BlobStore; pass `client` to reuse one (tests, or a shared client in services.ts). */
export function createS3BlobStore(
  location: S3StorageLocation,
  opts: CreateBlobStoreOptions & { client?: S3Client } = {},
): BlobStore {
  const ownsClient = opts.client === undefined;
  const client =
    opts.client ??
    createS3Client({
      endpoint: location.endpoint,
      region: location.region,
      forcePathStyle: location.forcePathStyle,
      credentials: location.credentials,
      connectionTimeoutMs: opts.connectionTimeoutMs,
      requestTimeoutMs: opts.requestTimeoutMs,
      maxAttempts: opts.maxAttempts,
    });
  const objectKey = (key: string) => {
    assertValidKey(key);
    return `${location.prefix}${key}`;
  };
  const Bucket = location.bucket;

  return {
    kind: 's3',

    async put(key: string, body: BlobBody, opts: PutOptions): Promise<void> {
      const params = {
        Bucket,
        Key: objectKey(key),
        ContentType: opts.contentType,
        ContentDisposition: opts.contentDisposition,
      };
      await putS3Object(client, params, body).catch((error: unknown) => {
        throw new AppError('STORAGE_ERROR', 'Could not write the file to S3 storage', { cause: error });
      });
    },

    async get(key: string): Promise<StoredBlob | null> {
      try {
        const result = await client.send(new GetObjectCommand({ Bucket, Key: objectKey(key) }));
        return { body: result.Body as Readable, size: result.ContentLength ?? 0, contentType: result.ContentType };
      } catch (error) {
        if (isNotFound(error)) return null;
        throw new AppError('STORAGE_ERROR', 'Could not read the file from S3 storage', { cause: error });
      }
    },

    async delete(key: string): Promise<void> {
      // S3 answers 204 for a missing key too, which is the contract we want.
      await client.send(new DeleteObjectCommand({ Bucket, Key: objectKey(key) })).catch((error: unknown) => {
        throw new AppError('STORAGE_ERROR', 'Could not delete the file from S3 storage', { cause: error });
      });
    },

    async presignedGetUrl(key: string, expiresInSeconds: number, filename: string): Promise<string | null> {
      const command = new GetObjectCommand({
        Bucket,
        Key: objectKey(key),
        ResponseContentDisposition: attachmentDisposition(filename),
      });
      // Signing is local (no request), so the only failures are programming errors: let them throw.
      return getSignedUrl(client, command, { expiresIn: expiresInSeconds });
    },

    async close(): Promise<void> {
      if (ownsClient) client.destroy();
    },
  };
}

function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } } | undefined;
  // A missing bucket is a configuration error, not a missing file.
  if (e?.name === 'NoSuchBucket') return false;
  return e?.name === 'NoSuchKey' || e?.$metadata?.httpStatusCode === 404;
}
