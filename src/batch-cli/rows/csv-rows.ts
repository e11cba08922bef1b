/**
 * A CSV rows file rewritten for the upload: the header (plus a `_filename` column when it has none),
 * then each row to send with its `_filename` cell set to the row's name. Cells stay text: the service
 * types them from the template's fields. Read as a stream with csv-parse, the service's own parser.
 */
import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';
import { stringify } from 'csv-stringify/sync';
import { RowsError, type RowCollector } from './row-collector.js';
import { UploadWriter } from './upload-writer.js';

/** The column that names an item's file (docs/batches.md). */
const FILENAME_COLUMN = '_filename';
/** Largest CSV record read: a cell may hold a JSON array, but not the whole file. */
const MAX_RECORD_CHARS = 8 * 1024 * 1024;

/** Writes the rows to send to `uploadPath`; returns the uploaded line each sent row starts on. */
export async function prepareCsvRows(
  sourcePath: string,
  uploadPath: string,
  collector: RowCollector,
): Promise<number[]> {
  const parser = createReadStream(sourcePath).pipe(
    parse({ bom: true, info: true, skip_empty_lines: true, max_record_size: MAX_RECORD_CHARS }),
  );
  const writer = await UploadWriter.create(uploadPath);
  const startLines: number[] = [];
  let header: string[] | undefined;
  let filenameColumn = -1;
  try {
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      if (!header) {
        // Names as the service reads them: trimmed.
        header = record.map((name) => name.trim());
        filenameColumn = header.indexOf(FILENAME_COLUMN);
        await writer.append(stringify([filenameColumn >= 0 ? record : [...record, FILENAME_COLUMN]]));
        continue;
      }
      const data = Object.fromEntries(header.map((name, i) => [name, record[i] ?? '']));
      const ownFilename = filenameColumn >= 0 ? record[filenameColumn] : undefined;
      const row = collector.accept({ line: info.lines, data, ownFilename: ownFilename || undefined });
      if (!row) continue;
      const cells = [...record];
      if (filenameColumn >= 0) cells[filenameColumn] = row.name;
      else cells.push(row.name);
      startLines.push(await writer.append(stringify([cells])));
    }
  } catch (error) {
    if (error instanceof Error && 'code' in error && String(error.code).startsWith('CSV_')) {
      throw new RowsError(`${collector.sourceName}: not a CSV file the batch API can read: ${error.message}`);
    }
    throw error;
  } finally {
    await writer.close();
  }
  if (!header) throw new RowsError(`${collector.sourceName}: empty; the first line must name the template's fields`);
  if (collector.rowCount === 0) throw new RowsError(`${collector.sourceName}: a header but no rows`);
  return startLines;
}
