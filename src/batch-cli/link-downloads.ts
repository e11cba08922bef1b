/**
 * `--out DIR`: each completed item's link downloaded into DIR as `<name>.pdf` while the batch runs.
 *
 * Items are listed with `?status=completed` in index order. Rather than page through every completed
 * item at each poll, the command keeps a settled prefix: the first items that are all downloaded or
 * failed. The completed ones among them are a fixed count, so the listing starts at that offset and
 * only reads items past the prefix (workers take items roughly in order, so that is a page or so).
 */
import { join } from 'node:path';
import type { BatchClient, BatchItem, BatchState } from './batch-client.js';
import { downloadFile, DownloadError } from './download-file.js';
import { listFailedItems, PAGE_SIZE } from './failed-items.js';
import type { SentRow } from './rows/rows-file.js';

/** Downloads at once: enough to keep up with the renders, few enough for a small machine. */
const DOWNLOAD_CONCURRENCY = 4;

/** A row that was not delivered, and why. */
export interface UndeliveredRow {
  row: SentRow | undefined;
  index: number;
  reason: string;
}

export interface LinkDownloadsOptions {
  client: BatchClient;
  batchId: string;
  outDir: string;
  /** The sent rows in the batch's order; item `index` i (0-based) is `rows[i]`. */
  rows: readonly SentRow[];
  /** The largest PDF a link may answer. */
  maxFileBytes: number;
}

/** Keeps DIR up to date with a batch's completed items. */
export class LinkDownloads {
  private readonly downloaded = new Set<number>();
  private readonly notDownloaded = new Map<number, string>();
  private failed = new Map<number, string>();
  private prefix = 0;
  private completedInPrefix = 0;

  constructor(private readonly options: LinkDownloadsOptions) {}

  /** Rows whose PDF is in DIR. */
  get deliveredCount(): number {
    return this.downloaded.size;
  }

  /** Downloads what completed since the last call and notes new failures; `batch` is a fresh poll. */
  async catchUp(batch: BatchState): Promise<void> {
    if (batch.completed > this.downloaded.size + this.notDownloaded.size) await this.downloadCompleted();
    if (batch.failed > this.failed.size) await this.noteFailed();
    this.advancePrefix();
  }

  /** Failed items (with their errors) and completed ones whose link could not be downloaded. */
  undelivered(): UndeliveredRow[] {
    const rows = [...this.failed.entries(), ...this.notDownloaded.entries()].sort((a, b) => a[0] - b[0]);
    return rows.map(([index, reason]) => ({ index, row: this.options.rows[index], reason }));
  }

  private async downloadCompleted(): Promise<void> {
    for (let offset = this.completedInPrefix; ; offset += PAGE_SIZE) {
      const page = await this.options.client.listItems(this.options.batchId, {
        status: 'completed',
        offset,
        limit: PAGE_SIZE,
      });
      const fresh = page.items.filter(
        (item) => !this.downloaded.has(item.index) && !this.notDownloaded.has(item.index),
      );
      await eachLimited(fresh, DOWNLOAD_CONCURRENCY, (item) => this.download(item));
      if (page.items.length < PAGE_SIZE || offset + PAGE_SIZE >= page.total) return;
    }
  }

  private async download(item: BatchItem): Promise<void> {
    const row = this.options.rows[item.index];
    if (!row)
      return void this.notDownloaded.set(
        item.index,
        `the service listed item ${item.index}, which this command did not send`,
      );
    if (!item.url) return void this.notDownloaded.set(item.index, 'completed without a link');
    try {
      await downloadFile(item.url, join(this.options.outDir, `${row.name}.pdf`), {
        kind: 'pdf',
        maxBytes: this.options.maxFileBytes,
      });
      this.downloaded.add(item.index);
    } catch (error) {
      if (!(error instanceof DownloadError)) throw error;
      this.notDownloaded.set(item.index, `download failed: ${error.message}`);
    }
  }

  private async noteFailed(): Promise<void> {
    this.failed = await listFailedItems(this.options.client, this.options.batchId);
  }

  private advancePrefix(): void {
    for (;;) {
      const completed = this.downloaded.has(this.prefix) || this.notDownloaded.has(this.prefix);
      if (!completed && !this.failed.has(this.prefix)) return;
      if (completed) this.completedInPrefix++;
      this.prefix++;
    }
  }
}

/** Runs `work` on every item, at most `limit` at a time. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
