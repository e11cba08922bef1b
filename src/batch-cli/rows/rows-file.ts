/**
 * `--data rows.csv|rows.ndjson|rows.json` made ready to send: every row named, `--resume`'s delivered
 * rows left out, and the rest either rewritten to a temporary upload (CSV, NDJSON: the API's `rows`
 * file part, typed by the service from the template's fields) or kept as JSON `items` (a .json array).
 * Each sent row keeps its row number and line, so a refusal can name the user's row.
 */
import { rmSync } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, extname, join } from 'node:path';
import type { FilenameTemplate } from '../filename-template.js';
import { prepareCsvRows } from './csv-rows.js';
import { prepareJsonRows } from './json-rows.js';
import { prepareNdjsonRows } from './ndjson-rows.js';
import { RowCollector, RowsError, type SentRow } from './row-collector.js';

export { RowsError, type SentRow };

/** The API's largest rows upload (docs/batches.md); a larger file is refused before it is read. */
export const MAX_ROWS_FILE_BYTES = 100 * 1024 * 1024;

/** The rows in the form the API takes them. */
export type RowsBody =
  | { kind: 'upload'; path: string; mediaType: 'text/csv' | 'application/x-ndjson'; fileName: string }
  | { kind: 'items'; items: { data: Record<string, unknown>; filename: string }[] };

/** The rows to send, in the batch's order. */
export interface PreparedRows {
  readonly sent: readonly SentRow[];
  /** Rows of the file left out because `--resume` found their file. */
  readonly skipped: number;
  readonly body: RowsBody;
  /** The sent row at an uploaded file's line (a refusal's `line`), if any. */
  rowAtUploadLine(line: number): SentRow | undefined;
  /** Removes the temporary upload. */
  dispose(): Promise<void>;
}

export interface PrepareRowsOptions {
  path: string;
  template: FilenameTemplate | undefined;
  isDelivered: (name: string) => boolean;
}

/** Temporary copies of rows files still on disk; removed at exit too, since a second Ctrl-C exits at once, past every `finally`. */
const temporaryDirs = new Set<string>();
let removedAtExit = false;

async function temporaryDir(): Promise<{ dir: string; remove: () => Promise<void> }> {
  if (!removedAtExit) {
    removedAtExit = true;
    process.once('exit', () => {
      for (const dir of temporaryDirs) rmSync(dir, { recursive: true, force: true });
    });
  }
  const dir = await mkdtemp(join(tmpdir(), 'pressroom-generate-'));
  temporaryDirs.add(dir);
  return { dir, remove: () => rm(dir, { recursive: true, force: true }).finally(() => temporaryDirs.delete(dir)) };
}

/** Reads and names the rows of `options.path`; throws RowsError for a file the command cannot send. */
export async function prepareRows(options: PrepareRowsOptions): Promise<PreparedRows> {
  const kind = rowsKind(options.path);
  const size = await stat(options.path).then(
    (s) => (s.isFile() ? s.size : -1),
    () => -2,
  );
  if (size === -2) throw new RowsError(`--data ${options.path}: no such file`);
  if (size === -1) throw new RowsError(`--data ${options.path}: not a file`);
  if (size > MAX_ROWS_FILE_BYTES)
    throw new RowsError(
      `--data ${options.path}: ${size} bytes, more than the ${MAX_ROWS_FILE_BYTES} bytes a batch upload may be; split it`,
    );
  const collector = new RowCollector({
    sourceName: basename(options.path),
    template: options.template,
    isDelivered: options.isDelivered,
  });
  if (kind === 'json') {
    const items = await prepareJsonRows(options.path, collector);
    return {
      sent: collector.sent,
      skipped: collector.skipped,
      body: { kind: 'items', items },
      rowAtUploadLine: () => undefined,
      dispose: async () => {},
    };
  }
  const { dir, remove } = await temporaryDir();
  try {
    const uploadPath = join(dir, `rows.${kind}`);
    const startLines =
      kind === 'csv'
        ? await prepareCsvRows(options.path, uploadPath, collector)
        : await prepareNdjsonRows(options.path, uploadPath, collector);
    const mediaType = kind === 'csv' ? 'text/csv' : 'application/x-ndjson';
    return {
      sent: collector.sent,
      skipped: collector.skipped,
      body: { kind: 'upload', path: uploadPath, mediaType, fileName: `rows.${kind}` },
      rowAtUploadLine: (line) => collector.sent[lastAtOrBefore(startLines, line)],
      dispose: remove,
    };
  } catch (error) {
    await remove();
    throw error;
  }
}

function rowsKind(path: string): 'csv' | 'ndjson' | 'json' {
  const extension = extname(path).toLowerCase();
  if (extension === '.csv') return 'csv';
  if (extension === '.ndjson' || extension === '.jsonl') return 'ndjson';
  if (extension === '.json') return 'json';
  throw new RowsError(`--data ${path}: name a .csv, .ndjson (or .jsonl) or .json file`);
}

/** The index of the last value of the ascending `starts` that is <= `value` (-1 when none). */
function lastAtOrBefore(starts: readonly number[], value: number): number {
  let low = 0;
  let high = starts.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (starts[middle]! <= value) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found;
}
