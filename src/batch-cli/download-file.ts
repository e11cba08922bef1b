/**
 * A result link downloaded to a file atomically: streamed to a temporary file beside it, then renamed,
 * so `--out` never holds half a PDF (and `--resume` never skips one). No API key goes with it: the
 * links are signed, and may point at another host (an S3 bucket) — one the command does not trust
 * (issue 49): what it sends is bounded in size, idle time and total time, and must start as the file it
 * claims to be (`%PDF-`, or a zip's `PK`), else the row is not delivered. A temporary file is removed on
 * every failure, and by `removePartialFiles` when the command quits at once (a second Ctrl-C).
 */
import { rmSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { causeOf, sleep } from './batch-client.js';
import { DOWNLOAD_IDLE_SECONDS, DOWNLOAD_TOTAL_SECONDS, type DownloadKind } from './download-bounds.js';

/** Tries of one download before the row counts as not delivered (a dropped connection, a 5xx). */
const DOWNLOAD_ATTEMPTS = 3;

/** A link that could not be downloaded. */
export class DownloadError extends Error {}

/** A download refused for what the server sent (too large, too slow, not the file it claims): not tried again. */
class DownloadRefused extends DownloadError {}

/** What a download must be: its kind and its largest size. */
export interface DownloadExpectation {
  readonly kind: DownloadKind;
  readonly maxBytes: number;
}

/** The first bytes of each kind: a PDF's header; a zip's first local header (or the end record of an empty one). */
const SIGNATURES: Record<DownloadKind, { readonly what: string; readonly starts: readonly Buffer[] }> = {
  pdf: { what: 'a PDF', starts: [Buffer.from('%PDF-')] },
  zip: { what: 'a zip', starts: [Buffer.from('PK\x03\x04', 'latin1'), Buffer.from('PK\x05\x06', 'latin1')] },
};
const SIGNATURE_BYTES = 5;

/** Temporary files being written now, removed by `removePartialFiles`. */
const partialFiles = new Set<string>();

/** Removes every temporary file a download is writing (synchronously: the process is about to exit). */
export function removePartialFiles(): void {
  for (const path of partialFiles) rmSync(path, { force: true });
  partialFiles.clear();
}

/** Downloads `url` to `path` (replacing it); throws DownloadError after the last try, or at once for a refusal. */
export async function downloadFile(url: string, path: string, expected: DownloadExpectation): Promise<void> {
  const protocol = new URL(url).protocol;
  if (protocol !== 'http:' && protocol !== 'https:') throw new DownloadError(`not an http(s) link: ${protocol}`);
  for (let attempt = 1; ; attempt++) {
    try {
      await downloadOnce(url, path, expected);
      return;
    } catch (error) {
      if (error instanceof DownloadRefused || attempt >= DOWNLOAD_ATTEMPTS) {
        throw new DownloadError(
          `${basename(path)}: ${error instanceof DownloadError ? error.message : causeOf(error)}; nothing was kept`,
        );
      }
      await sleep(1000 * attempt);
    }
  }
}

async function downloadOnce(url: string, path: string, expected: DownloadExpectation): Promise<void> {
  const controller = new AbortController();
  let refusal: DownloadRefused | undefined;
  const stop = (why: string): DownloadRefused => {
    refusal ??= new DownloadRefused(why);
    controller.abort(refusal);
    return refusal;
  };
  const total = setTimeout(
    () => stop(`the download did not finish within ${DOWNLOAD_TOTAL_SECONDS} s`),
    DOWNLOAD_TOTAL_SECONDS * 1000,
  );
  let idle = setTimeout(
    () => stop(`the server sent nothing for ${DOWNLOAD_IDLE_SECONDS} s`),
    DOWNLOAD_IDLE_SECONDS * 1000,
  );
  const active = () => {
    clearTimeout(idle);
    idle = setTimeout(
      () => stop(`the server sent nothing for ${DOWNLOAD_IDLE_SECONDS} s`),
      DOWNLOAD_IDLE_SECONDS * 1000,
    );
  };
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString('hex')}.part`);
  try {
    const response = await fetch(url, { signal: controller.signal });
    if (!response.ok || !response.body) {
      await response.body?.cancel();
      throw new DownloadError(`the link answered HTTP ${response.status}`);
    }
    const declared = Number(response.headers.get('content-length'));
    if (Number.isFinite(declared) && declared > expected.maxBytes) {
      await response.body.cancel();
      throw new DownloadRefused(
        `the server announced ${declared} bytes, more than the ${expected.maxBytes / 2 ** 20} MiB a file may have (--max-file-mb)`,
      );
    }
    partialFiles.add(temporary);
    const file = await open(temporary, 'wx');
    try {
      await writeChecked(response.body as AsyncIterable<Uint8Array>, file, { expected, active, stop });
    } finally {
      await file.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw refusal ?? error;
  } finally {
    partialFiles.delete(temporary);
    clearTimeout(total);
    clearTimeout(idle);
  }
}

/** Writes the body to `file`, checking its first bytes and its size as they arrive. */
async function writeChecked(
  body: AsyncIterable<Uint8Array>,
  file: import('node:fs/promises').FileHandle,
  o: { expected: DownloadExpectation; active: () => void; stop: (why: string) => DownloadRefused },
): Promise<void> {
  const { what, starts } = SIGNATURES[o.expected.kind];
  let head = Buffer.alloc(0);
  let size = 0;
  for await (const chunk of body) {
    o.active();
    size += chunk.byteLength;
    if (size > o.expected.maxBytes)
      throw o.stop(`the file is larger than the ${o.expected.maxBytes / 2 ** 20} MiB a file may have (--max-file-mb)`);
    if (head.length < SIGNATURE_BYTES) {
      head = Buffer.concat([head, chunk]).subarray(0, SIGNATURE_BYTES);
      if (!isStartOf(head, starts, size))
        throw o.stop(`the file is not ${what} (it starts with ${JSON.stringify(head.toString('latin1'))})`);
    }
    await file.write(chunk);
  }
  if (!starts.some((start) => head.subarray(0, start.length).equals(start)))
    throw o.stop(`the file is not ${what} (${size} bytes)`);
}

/** Whether `head` (the first bytes so far) can still be, or already is, one of `starts`. */
function isStartOf(head: Buffer, starts: readonly Buffer[], size: number): boolean {
  return starts.some((start) => {
    const n = Math.min(head.length, start.length, size);
    return head.subarray(0, n).equals(start.subarray(0, n));
  });
}
