/**
 * Builds a batch's one file once its last item has ended (issue 40): a zip of the delivered PDFs, or one
 * merged PDF with an outline entry per item. A batch in `assembling` is claimed with a lease like a job
 * (a process that dies mid-way lets it run out and another builds it again from the start: the items'
 * files are still there). The file is written to disk as a stream, one item read at a time, and
 * delivered from there (a signed link, or the customer's bucket); then in ONE transaction the batch
 * gets its result and end, and its webhook is queued.
 */
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ZipFile } from 'yazl';
import type { DatabaseHandle } from '../db/database.js';
import { withTransaction } from '../db/database.js';
import type { BatchRow } from '../db/schema.js';
import type { Deliverer, DeliveryRequest } from '../files/delivery.js';
import type { FileService } from '../files/files.js';
import type { JobWakeups } from '../jobs/job-wakeups.js';
import type { Qpdf } from '../pdf/qpdf.js';
import { countPages } from '../pdf/pdf-page-count.js';
import { isAppError } from '../shared/errors.js';
import { newInstanceId } from '../shared/ids.js';
import type { Logger } from '../shared/log.js';
import type { WebhookQueue } from '../webhooks/webhook-queue.js';
import { createClaimLoop, type ClaimLoop } from '../shared/claim-loop.js';
import { endStatus, enqueueBatchWebhook } from './batch-ends.js';
import * as store from './batches-store.js';
import { uniqueNames } from './unique-names.js';

/** Attempts at building one batch's file before it ends without one (ASSEMBLY_FAILED; the items' links stay). */
const ASSEMBLY_MAX_ATTEMPTS = 3;
/** Items read from the database at a time while a file is built. */
const ITEM_PAGE = 500;

export interface BatchAssemblerOptions {
  database: DatabaseHandle;
  files: FileService;
  /** Hands the batch's file over as its items were: a signed link, or the customer's bucket. */
  delivery: Deliverer;
  qpdf: Qpdf;
  webhooks: WebhookQueue;
  wakeups: JobWakeups;
  leaseMs: number;
  pollIntervalMs: number;
  logger: Logger;
  workerId?: string;
}

/**
 * The batch's completed items in order, with names unique in the zip whatever their case (unique-names.ts):
 * a later item of an earlier item's name gets its row number, `a-3.pdf`, and more if that is taken too.
 */
async function deliveredItems(
  database: DatabaseHandle,
  batchId: string,
): Promise<{ fileId: string; name: string; title: string }[]> {
  const rows: { fileId: string | null; name: string; tag: number }[] = [];
  for (let after = -1; ; ) {
    const page = await store.completedItemFiles(database.db, batchId, after, ITEM_PAGE);
    for (const row of page) {
      const index = Number(row.batch_index);
      rows.push({
        fileId: row.result_file_id,
        name: row.result_filename ?? `document-${index + 1}.pdf`,
        tag: index + 1,
      });
    }
    if (page.length < ITEM_PAGE) break;
    after = Number(page.at(-1)!.batch_index);
  }
  const names = uniqueNames(rows);
  return rows.flatMap((row, i) =>
    row.fileId ? [{ fileId: row.fileId, name: names[i]!, title: names[i]!.replace(/\.pdf$/i, '') }] : [],
  );
}

export function createBatchAssembler(o: BatchAssemblerOptions): ClaimLoop {
  const workerId = o.workerId ?? newInstanceId();
  const logger = o.logger.child({ component: 'batch-assembly', workerId });

  async function read(fileId: string): Promise<Buffer> {
    const bytes = await o.files.read(fileId);
    if (!bytes) throw new Error(`an item's file (${fileId}) is gone before the batch was assembled`);
    return bytes;
  }

  /** The zip, written to `path`; each item is read only when the zip reaches it. */
  async function buildZip(items: { fileId: string; name: string }[], path: string): Promise<void> {
    const zip = new ZipFile();
    for (const item of items) {
      let started = false;
      const lazy = new Readable({
        read() {
          if (started) return;
          started = true;
          read(item.fileId).then(
            (bytes) => {
              this.push(bytes);
              this.push(null);
            },
            (error: Error) => this.destroy(error),
          );
        },
      });
      // Stored, not deflated: PDFs are compressed inside already.
      zip.addReadStream(lazy, item.name, { compress: false, mtime: new Date() });
    }
    zip.end();
    await pipeline(zip.outputStream, createWriteStream(path, { mode: 0o600 }));
  }

  /** The merged PDF in `dir`: the items written there one by one, qpdf merges them from disk. */
  async function buildMerged(
    accountId: string,
    items: { fileId: string; title: string }[],
    dir: string,
  ): Promise<string> {
    const parts: { name: string; title: string; pages: number }[] = [];
    for (const [i, item] of items.entries()) {
      const bytes = await read(item.fileId);
      const name = `item-${i}.pdf`;
      await writeFile(join(dir, name), bytes, { mode: 0o600 });
      parts.push({ name, title: item.title, pages: await countPages(bytes) });
    }
    await o.qpdf.mergeFiles({ dir, parts, out: 'batch.pdf', accountId });
    await Promise.all(parts.map((p) => rm(join(dir, p.name), { force: true })));
    return join(dir, 'batch.pdf');
  }

  async function assemble(batch: BatchRow): Promise<void> {
    const renew = setInterval(
      () =>
        void store.renewBatchLease(o.database.db, batch.id, workerId, Date.now() + o.leaseMs).catch(() => undefined),
      Math.max(100, Math.floor(o.leaseMs / 3)),
    );
    const dir = await mkdtemp(join(tmpdir(), 'pressroom-batch-'));
    try {
      const items = await deliveredItems(o.database, batch.id);
      const zip = batch.output === 'zip';
      const path = zip ? join(dir, 'batch.zip') : await buildMerged(batch.account_id, items, dir);
      if (zip) await buildZip(items, path);
      // A batch keeps its items' generation options; what delivery reads of them is the same for its file.
      const options = JSON.parse(batch.options) as DeliveryRequest;
      const file = zip
        ? { filename: `${batch.filename}.zip`, contentType: 'application/zip' }
        : { filename: `${batch.filename}.pdf`, contentType: 'application/pdf' };
      const delivery = await o.delivery.deliver(
        batch.account_id,
        { path, size: (await stat(path)).size },
        { ...options, exportType: 'url', file },
      );
      const result =
        delivery.kind === 's3'
          ? {
              result_url: null,
              result_s3_bucket: delivery.bucket,
              result_s3_key: delivery.key,
              result_expires_at: null,
              result_file_id: null,
            }
          : delivery.kind === 'url'
            ? {
                result_url: delivery.url,
                result_s3_bucket: null,
                result_s3_key: null,
                result_expires_at: delivery.expiresAt,
                result_file_id: delivery.fileId,
              }
            : undefined;
      if (!result) throw new Error('a batch file is delivered by url or s3');
      await finish(batch, { ...result, result_filename: file.filename });
      logger.info({ batchId: batch.id, items: items.length, output: batch.output }, 'batch assembled');
    } catch (error) {
      await failed(batch, error);
    } finally {
      clearInterval(renew);
      await rm(dir, { recursive: true, force: true });
    }
  }

  async function finish(batch: BatchRow, values: Parameters<typeof store.finishAssembly>[3]): Promise<void> {
    const now = Date.now();
    const status = endStatus(batch);
    const done = await withTransaction(o.database.db, async (trx) => {
      if (
        !(await store.finishAssembly(trx, batch.id, workerId, {
          ...values,
          status,
          completed_at: now,
          updated_at: now,
        }))
      )
        return false;
      await enqueueBatchWebhook(trx, o.webhooks, { ...batch, ...values, status } as BatchRow);
      return true;
    });
    if (done) o.webhooks.announce();
    else
      logger.warn(
        { batchId: batch.id },
        'assembly lease lost before the batch was finished; the other claimer finishes it',
      );
  }

  async function failed(batch: BatchRow, error: unknown): Promise<void> {
    const message = isAppError(error) || error instanceof Error ? error.message : String(error);
    if (batch.attempts < ASSEMBLY_MAX_ATTEMPTS) {
      logger.warn(
        { batchId: batch.id, attempt: batch.attempts, err: error },
        'could not assemble the batch; will retry',
      );
      // Freed now, claimed again at the next poll.
      await store
        .renewBatchLease(o.database.db, batch.id, workerId, Date.now() + o.pollIntervalMs)
        .catch(() => undefined);
      return;
    }
    logger.error(
      { batchId: batch.id, err: error },
      'could not assemble the batch; it ends without its file (the items keep their links)',
    );
    await finish(batch, {
      error_code: 'ASSEMBLY_FAILED',
      error_message: `The ${batch.output} file could not be built (${message}); each delivered item has its own link (GET /v1/pdf/batches/${batch.id}/items).`,
    }).catch((e) => logger.error({ err: e }, 'could not record the failed assembly'));
  }

  return createClaimLoop({
    what: 'batch assemblies',
    slots: 1,
    claim: () => store.claimAssemblies(o.database, { workerId, limit: 1, now: Date.now(), leaseMs: o.leaseMs }),
    run: assemble,
    wakeups: o.wakeups,
    pollIntervalMs: o.pollIntervalMs,
    logger,
  });
}
