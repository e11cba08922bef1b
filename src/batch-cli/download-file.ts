/**
 * A result link downloaded to a file atomically: streamed to a temporary file beside it, then renamed,
 * so `--out` never holds half a PDF (and `--resume` never skips one). No API key goes with it: the
 * links are signed, and may point at another host (an S3 bucket).
 */
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { causeOf, sleep } from './batch-client.js';

/** Tries of one download before the row counts as not delivered. */
const DOWNLOAD_ATTEMPTS = 3;

/** A link that could not be downloaded. */
export class DownloadError extends Error {}

/** Downloads `url` to `path` (replacing it); throws DownloadError after the last try. */
export async function downloadFile(url: string, path: string): Promise<void> {
  const protocol = new URL(url).protocol;
  if (protocol !== 'http:' && protocol !== 'https:') throw new DownloadError(`not an http(s) link: ${protocol}`);
  for (let attempt = 1; ; attempt++) {
    try {
      await downloadOnce(url, path);
      return;
    } catch (error) {
      if (attempt >= DOWNLOAD_ATTEMPTS)
        throw new DownloadError(
          `${basename(path)}: ${error instanceof DownloadError ? error.message : causeOf(error)}`,
        );
      await sleep(1000 * attempt);
    }
  }
}

async function downloadOnce(url: string, path: string): Promise<void> {
  const response = await fetch(url);
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new DownloadError(`the link answered HTTP ${response.status}`);
  }
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString('hex')}.part`);
  try {
    await pipeline(
      Readable.fromWeb(response.body as import('node:stream/web').ReadableStream),
      createWriteStream(temporary, { flags: 'wx' }),
    );
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
}
