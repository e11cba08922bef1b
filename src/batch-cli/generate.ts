/**
 * `pressroom generate`: a rows file through the batch API (docs/batches.md), the results downloaded.
 *
 *   check options → read and name the rows (--resume leaves out those on disk) → POST the batch
 *   → poll it (progress; --out downloads each completed item) until it ends → --zip/--merged download
 *   the one result → summary. Ctrl-C cancels the batch and winds up the same way.
 *
 * Exit codes: 0 every row delivered, 1 some not (failed rows listed with their errors, or the service
 * lost), 2 a refused request (bad options or rows, or the API's 4xx, printed), 130 cancelled by Ctrl-C.
 */
import { existsSync } from 'node:fs';
import { mkdir, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import {
  ApiError,
  createBatchClient,
  ServiceUnreachableError,
  type BatchClient,
  type BatchState,
} from './batch-client.js';
import { downloadFile, DownloadError, removePartialFiles, type DownloadExpectation } from './download-file.js';
import { listFailedItems } from './failed-items.js';
import {
  checkGenerateOptions,
  UsageError,
  type Destination,
  type GenerateOptions,
  type RawGenerateOptions,
} from './generate-options.js';
import { watchInterrupt, type Interrupt } from './interrupt.js';
import { LinkDownloads, type UndeliveredRow } from './link-downloads.js';
import { createProgressReporter, RateMeter } from './progress.js';
import { refusalLines } from './refusal.js';
import { describeRow } from './rows/row-collector.js';
import { prepareRows, RowsError, type PreparedRows } from './rows/rows-file.js';

/** Between polls: two or three requests a poll keep near a free account's 60 requests a minute (a 429 is waited out). */
const POLL_INTERVAL_MS = 2000;
/** Undelivered rows listed at the end; the rest are counted. */
const MAX_LISTED_FAILURES = 100;
const FINAL_STATUSES = new Set<BatchState['status']>(['completed', 'completed_with_errors', 'failed', 'cancelled']);

export const EXIT = { delivered: 0, undelivered: 1, refused: 2, interrupted: 130 } as const;

/** Where the command writes: stdout for progress and the summary, stderr for what went wrong. */
export interface GenerateOutput {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WritableStream;
}

/** Runs the command; resolves with its exit code. */
export async function runGenerate(raw: RawGenerateOptions, io: GenerateOutput = process): Promise<number> {
  const voice: Voice = {
    say: (line) => void io.stdout.write(`${line}\n`),
    complain: (line) => void io.stderr.write(`pressroom generate: ${line}\n`),
    io,
  };
  let options: GenerateOptions;
  try {
    options = checkGenerateOptions(raw);
    await prepareDestination(options.destination);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    voice.complain(error.message);
    return EXIT.refused;
  }
  let batchId: string | undefined;
  // From here on Ctrl-C is ours: before the batch exists it stops the command, after it cancels the batch.
  const interrupt = watchInterrupt(() => {
    voice.complain(batchId ? `stopped waiting; batch ${batchId} is cancelled on the service` : 'stopped');
    removePartialFiles();
    process.exit(EXIT.interrupted);
  });
  // Before the batch exists, the first Ctrl-C stops the command once the rows are read (the copy removed).
  interrupt.onFirst(() => {
    if (!batchId) voice.complain('stopping before anything is sent (Ctrl-C again to quit at once)');
  });
  try {
    const rows = await readRows(options, voice);
    if (typeof rows === 'number') return rows;
    try {
      if (interrupt.requested) return stoppedBeforeSending(voice);
      return await sendAndFollow({ options, rows, interrupt, voice, onBatch: (id) => (batchId = id) });
    } finally {
      await rows.dispose();
    }
  } finally {
    interrupt.dispose();
  }
}

interface Voice {
  say(line: string): void;
  complain(line: string): void;
  io: GenerateOutput;
}

/** The rows to send, or the exit code when there are none to send or they cannot be sent. */
async function readRows(options: GenerateOptions, voice: Voice): Promise<PreparedRows | number> {
  const outDir = options.destination.kind === 'out' && options.resume ? options.destination.dir : undefined;
  let rows: PreparedRows;
  try {
    rows = await prepareRows({
      path: options.dataPath,
      template: options.filename,
      isDelivered: (name) => outDir !== undefined && existsSync(join(outDir, `${name}.pdf`)),
    });
  } catch (error) {
    if (!(error instanceof RowsError)) throw error;
    voice.complain(error.message);
    return EXIT.refused;
  }
  if (rows.skipped > 0)
    voice.say(
      `--resume: ${rows.skipped} of ${countOf(rows.skipped + rows.sent.length, 'row')} already in ${whereTo(options.destination)}`,
    );
  if (rows.sent.length > 0) return rows;
  await rows.dispose();
  voice.say('nothing left to send');
  return EXIT.delivered;
}

function stoppedBeforeSending(voice: Voice): number {
  voice.complain('stopped before anything was sent');
  return EXIT.interrupted;
}

async function sendAndFollow(input: {
  options: GenerateOptions;
  rows: PreparedRows;
  interrupt: Interrupt;
  voice: Voice;
  onBatch: (batchId: string) => void;
}): Promise<number> {
  const { options, rows, interrupt, voice } = input;
  const client = createBatchClient({ baseUrl: options.url, apiKey: options.key });
  const sourceName = basename(options.dataPath);
  let batchId: string;
  try {
    const output = options.destination.kind === 'out' ? 'links' : options.destination.kind;
    batchId = (
      await client.createBatch({ templateId: options.templateId, version: options.version, output, rows: rows.body })
    ).batch_id;
  } catch (error) {
    if (error instanceof ApiError && error.status >= 400 && error.status < 500) {
      for (const line of refusalLines(error, rows, sourceName)) voice.complain(line);
      return EXIT.refused;
    }
    if (!(error instanceof ApiError || error instanceof ServiceUnreachableError)) throw error;
    voice.complain(`could not start the batch: ${failureText(error)}`);
    return EXIT.undelivered;
  }
  input.onBatch(batchId);
  voice.say(`batch ${batchId}: ${countOf(rows.sent.length, 'row')}, results to ${whereTo(options.destination)}`);
  try {
    return await follow({ client, batchId, options, rows, interrupt, voice, sourceName });
  } catch (error) {
    if (!(error instanceof ApiError || error instanceof ServiceUnreachableError)) throw error;
    voice.complain(
      `lost batch ${batchId}: ${failureText(error)}; it goes on on the service${options.destination.kind === 'out' ? ': run again with --resume to fetch what is missing' : ''}`,
    );
    return interrupt.requested ? EXIT.interrupted : EXIT.undelivered;
  }
}

interface Following {
  client: BatchClient;
  batchId: string;
  options: GenerateOptions;
  rows: PreparedRows;
  interrupt: Interrupt;
  voice: Voice;
  sourceName: string;
}

async function follow(f: Following): Promise<number> {
  const { client, batchId, options, voice } = f;
  const destination = options.destination;
  const links =
    destination.kind === 'out'
      ? new LinkDownloads({
          client,
          batchId,
          outDir: destination.dir,
          rows: f.rows.sent,
          maxFileBytes: options.maxFileBytes,
        })
      : undefined;
  const progress = createProgressReporter(voice.io.stdout);
  f.interrupt.onFirst(() => {
    progress.aside(() => voice.complain(`cancelling batch ${batchId} (Ctrl-C again to stop waiting)`));
    client
      .cancel(batchId)
      .catch((error: unknown) =>
        progress.aside(() => voice.complain(`the cancel did not go through: ${failureText(error)}`)),
      );
  });
  const meter = new RateMeter();
  let batch: BatchState;
  try {
    for (;;) {
      batch = await client.getBatch(batchId);
      // The rate counts rendered items only: a cancel settles many at once without rendering them.
      const rate = meter.observe(batch.completed + batch.failed, Date.now());
      const left = batch.total - batch.completed - batch.failed - batch.cancelled;
      const secondsLeft = batch.estimated_seconds_left ?? (rate ? left / rate : null);
      progress.update({
        total: batch.total,
        completed: batch.completed,
        failed: batch.failed,
        cancelled: batch.cancelled,
        ratePerSecond: rate,
        secondsLeft,
      });
      if (links) await links.catchUp(batch);
      if (FINAL_STATUSES.has(batch.status)) break;
      await f.interrupt.sleep(POLL_INTERVAL_MS);
    }
  } finally {
    progress.stop();
  }
  const undelivered = links ? links.undelivered() : await failedRows(f);
  let delivered = links ? links.deliveredCount : 0;
  if (destination.kind !== 'out')
    delivered = await downloadResult(
      batch,
      { path: destination.file, kind: destination.kind === 'zip' ? 'zip' : 'pdf', maxBytes: options.maxFileBytes },
      voice,
    );
  return summarize({ f, batch, delivered, undelivered });
}

/** --zip / --merged: the one file, downloaded; the number of rows it holds (0 if it could not be had). */
async function downloadResult(
  batch: BatchState,
  file: DownloadExpectation & { path: string },
  voice: Voice,
): Promise<number> {
  if (!batch.result?.url) {
    if (batch.completed > 0) voice.complain(`batch ${batch.batch_id} ended ${batch.status} without a result link`);
    return 0;
  }
  try {
    await downloadFile(batch.result.url, file.path, file);
    return batch.completed;
  } catch (error) {
    if (!(error instanceof DownloadError)) throw error;
    voice.complain(`could not download the result: ${error.message}`);
    return 0;
  }
}

async function failedRows(f: Following): Promise<UndeliveredRow[]> {
  const failed = await listFailedItems(f.client, f.batchId);
  return [...failed.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([index, reason]) => ({ index, row: f.rows.sent[index], reason }));
}

function summarize(input: {
  f: Following;
  batch: BatchState;
  delivered: number;
  undelivered: UndeliveredRow[];
}): number {
  const { f, batch, delivered, undelivered } = input;
  const sent = f.rows.sent.length;
  const where = whereTo(f.options.destination);
  for (const item of undelivered.slice(0, MAX_LISTED_FAILURES)) {
    const row = item.row ? `${describeRow(item.row, f.sourceName)}, ${item.row.name}.pdf` : `item ${item.index}`;
    f.voice.complain(`${row}: ${item.reason}`);
  }
  if (undelivered.length > MAX_LISTED_FAILURES)
    f.voice.complain(`… and ${undelivered.length - MAX_LISTED_FAILURES} more rows not delivered`);
  const skipped = f.rows.skipped > 0 ? `; ${f.rows.skipped} more already there` : '';
  if (f.interrupt.requested || batch.status === 'cancelled') {
    const cancelled = batch.cancelled > 0 ? `; ${batch.cancelled} cancelled before they started (not charged)` : '';
    f.voice.say(`cancelled: delivered ${delivered} of ${countOf(sent, 'row')} to ${where}${skipped}${cancelled}`);
    return f.interrupt.requested ? EXIT.interrupted : EXIT.undelivered;
  }
  f.voice.say(`delivered ${delivered} of ${countOf(sent, 'row')} to ${where}${skipped}`);
  if (delivered === sent && undelivered.length === 0) return EXIT.delivered;
  if (undelivered.length > 0)
    f.voice.complain(`${undelivered.length} of ${countOf(sent, 'row')} not delivered (batch ${batch.batch_id})`);
  return EXIT.undelivered;
}

/** --out: the folder made if missing; --zip/--merged: a file path in a folder that exists. */
async function prepareDestination(destination: Destination): Promise<void> {
  if (destination.kind === 'out') {
    const existing = await stat(destination.dir).catch(() => undefined);
    if (existing && !existing.isDirectory()) throw new UsageError(`--out ${destination.dir}: not a folder`);
    await mkdir(destination.dir, { recursive: true });
    return;
  }
  const folder = await stat(dirname(destination.file)).catch(() => undefined);
  if (!folder?.isDirectory())
    throw new UsageError(
      `--${destination.kind} ${destination.file}: the folder ${dirname(destination.file)} does not exist`,
    );
  if ((await stat(destination.file).catch(() => undefined))?.isDirectory())
    throw new UsageError(`--${destination.kind} ${destination.file}: a folder; name the file to write`);
}

/** `1 row`, `3 rows`. */
function countOf(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}

function whereTo(destination: Destination): string {
  return destination.kind === 'out' ? destination.dir : destination.file;
}

/** A failure in one line, never with the API key (no request headers are ever included). */
function failureText(error: unknown): string {
  if (error instanceof ApiError) {
    const body = error.body as { error?: string; message?: string } | string;
    const detail =
      typeof body === 'object' && body && typeof body.message === 'string'
        ? `${body.error ?? ''} ${body.message}`.trim()
        : String(typeof body === 'string' ? body : JSON.stringify(body)).slice(0, 300);
    return `HTTP ${error.status}${detail ? `: ${detail}` : ''}`;
  }
  return error instanceof Error ? error.message : String(error);
}
