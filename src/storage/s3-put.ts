/**
 * Writing one object to S3 (the service's storage and customers' buckets alike), from memory or
 * from a spooled file, holding at most one part of a long file in memory.
 *
 * Up to MULTIPART_ABOVE_BYTES the body goes in one PutObject as a buffer (a spooled file read once):
 * the SDK retries a buffer, but not a stream body (aws-sdk-js-v3 #5479, #6770). A larger spooled file
 * goes as a multipart upload, its parts read from the file one at a time into one buffer kept for the
 * purpose, each sent (and retried by the SDK) as that buffer; a part that fails for good aborts the
 * upload, so no parts are left stored (and billed) in the bucket.
 *
 * Why not `@aws-sdk/lib-storage`'s Upload: it reads a stream into a fresh buffer per part, which lived
 * until the next collection (no gain in the process's RSS over one PutObject:
 * docs/performance-log/2026-11-24-to-27-long-documents.md), it needs a newer client than ours, and it brings browser
 * polyfills. What it does for a file is four commands, here.
 */
import { open } from 'node:fs/promises';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  PutObjectCommand,
  UploadPartCommand,
  type CompletedPart,
  type S3Client,
} from '@aws-sdk/client-s3';
import { bodyBytes, type BlobBody } from './blob-body.js';
import type { SpooledFile } from '../pdf/spool.js';

/** Above this a spooled file is uploaded in parts; the compacted 330-page report (11 MB) is below it. */
export const MULTIPART_ABOVE_BYTES = 16 << 20;
/** One part; S3 wants at least 5 MiB for every part but the last. */
const PART_BYTES = 8 << 20;

/** The object's name and headers. */
export interface S3ObjectParams {
  readonly Bucket: string;
  readonly Key: string;
  readonly ContentType?: string;
  readonly ContentDisposition?: string;
}

/** Stores `body` at `params`; rejects with the SDK's error (the callers say what failed). */
export async function putS3Object(client: S3Client, params: S3ObjectParams, body: BlobBody): Promise<void> {
  if (Buffer.isBuffer(body) || body.size <= MULTIPART_ABOVE_BYTES) {
    await client.send(new PutObjectCommand({ ...params, Body: await bodyBytes(body) }));
    return;
  }
  await putInParts(client, params, body);
}

async function putInParts(client: S3Client, params: S3ObjectParams, file: SpooledFile): Promise<void> {
  const { Bucket, Key } = params;
  const { UploadId } = await client.send(new CreateMultipartUploadCommand(params));
  if (!UploadId) throw new Error('S3 answered CreateMultipartUpload without an UploadId');
  const handle = await open(file.path, 'r');
  try {
    const part = Buffer.allocUnsafe(PART_BYTES);
    const parts: CompletedPart[] = [];
    for (let offset = 0, PartNumber = 1; offset < file.size; offset += PART_BYTES, PartNumber += 1) {
      const length = Math.min(PART_BYTES, file.size - offset);
      const { bytesRead } = await handle.read(part, 0, length, offset);
      if (bytesRead !== length)
        throw new Error(`the spooled file ended at ${offset + bytesRead} bytes, not ${file.size}`);
      // The SDK is done with the buffer when send settles (retries included), so it is reused.
      const { ETag } = await client.send(
        new UploadPartCommand({
          Bucket,
          Key,
          UploadId,
          PartNumber,
          Body: part.subarray(0, length),
          ContentLength: length,
        }),
      );
      parts.push({ ETag, PartNumber });
    }
    await client.send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId, MultipartUpload: { Parts: parts } }));
  } catch (error) {
    await client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId })).catch(() => {});
    throw error;
  } finally {
    await handle.close();
  }
}
