/** The bytes a BlobStore put takes: in memory, or a spooled file (spool.ts) on local disk. */
import { readFile } from 'node:fs/promises';
import type { SpooledFile } from '../pdf/spool.js';

/** What a put stores: bytes in memory, or a spooled file on local disk (a long PDF), streamed from it. */
export type BlobBody = Buffer | SpooledFile;

/** How many bytes a put of `body` stores. */
export function bodySize(body: BlobBody): number {
  return Buffer.isBuffer(body) ? body.length : body.size;
}

/**
 * `body` as one buffer in memory: what a single S3 PutObject sends (`s3-put.ts`). The SDK sends a
 * stream but cannot retry it (it fails at the first error instead: aws-sdk-js-v3#5479, #6770); a
 * spooled PDF is already compacted (the 330-page report: 11 MB tagged), and one larger than
 * `MULTIPART_ABOVE_BYTES` goes in parts instead.
 */
export async function bodyBytes(body: BlobBody): Promise<Buffer> {
  return Buffer.isBuffer(body) ? body : readFile(body.path);
}
