/**
 * The spool: a directory on local disk where a long document's PDF waits between printing and
 * delivery, so that the service process does not hold it, and copies of it, in memory while it is
 * compacted and stored (issue 17: a 330-page tagged report is 56 MB out of Chromium). A spooled file
 * is written as Chromium streams the PDF (`PdfRenderer.renderSpilling`), titled in place, compacted
 * into a second file by the compaction thread, delivered from that (streamed), and both are removed
 * when the document is done.
 *
 * A process that ends mid-document leaves its files behind: a spool removes files older than
 * `STALE_AFTER_MS` when it opens and at each sweep of expired files (ops/sweep.ts): a spooled file
 * lives from the end of its print to its delivery, seconds, never an hour.
 * Files are named at random, so processes may share one directory.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** A file in the spool: where it is and how many bytes it holds. */
export interface SpooledFile {
  readonly path: string;
  readonly size: number;
}

/**
 * A PDF that reaches this many bytes while Chromium streams it (and is not PDF/A) goes through a spool
 * file instead of memory: an invoice (tens of kB) never does, a long report (megabytes) always does.
 */
export const SPOOL_ABOVE_BYTES = 1024 * 1024;

/** Files older than this are a stopped process's leftovers. */
const STALE_AFTER_MS = 60 * 60 * 1000;

export class Spool {
  private constructor(readonly dir: string) {}

  /** Creates the directory (owner only) and removes what crashed processes left in it. */
  static async open(dir: string): Promise<Spool> {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const spool = new Spool(dir);
    await spool.sweep();
    return spool;
  }

  /**
   * Removes files older than STALE_AFTER_MS: what a process that stopped mid-document left (a worker
   * killed and restarted within the hour leaves its files to the next sweep). Returns how many.
   */
  async sweep(now = Date.now()): Promise<number> {
    let removed = 0;
    for (const name of await readdir(this.dir)) {
      const path = join(this.dir, name);
      const info = await stat(path).catch(() => undefined);
      if (info?.isFile() && now - info.mtimeMs > STALE_AFTER_MS) {
        await rm(path, { force: true });
        removed += 1;
      }
    }
    return removed;
  }

  /** A new, unused path in the spool (nothing is created). */
  newPath(): string {
    return join(this.dir, `${randomUUID()}.pdf`);
  }

  /** Removes spooled files; a file already gone is not an error. */
  async remove(...paths: (string | undefined)[]): Promise<void> {
    await Promise.all(paths.map((path) => (path ? rm(path, { force: true }) : undefined)));
  }
}
