/**
 * An NDJSON rows file rewritten for the upload: one `{"data": …, "filename": name}` line per row to
 * send, whichever of the two line shapes the file used (docs/batches.md). Blank lines are skipped.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { itemOf, RowsError, type RowCollector } from './row-collector.js';
import { UploadWriter } from './upload-writer.js';

/** Writes the rows to send to `uploadPath`; returns the uploaded line each sent row is on. */
export async function prepareNdjsonRows(
  sourcePath: string,
  uploadPath: string,
  collector: RowCollector,
): Promise<number[]> {
  const writer = await UploadWriter.create(uploadPath);
  // Read only once nothing is awaited before the loop: lines (and the end) of a small file emitted
  // before `for await` begins are lost, and the loop would wait for ever.
  const lines = createInterface({ input: createReadStream(sourcePath, { encoding: 'utf8' }), crlfDelay: Infinity });
  const startLines: number[] = [];
  let lineNumber = 0;
  try {
    for await (const text of lines) {
      lineNumber++;
      const trimmed = (lineNumber === 1 ? text.replace(/^\uFEFF/, '') : text).trim();
      if (trimmed.length === 0) continue;
      const where = `${collector.sourceName} line ${lineNumber}`;
      let value: unknown;
      try {
        value = JSON.parse(trimmed);
      } catch (error) {
        throw new RowsError(`${where}: not JSON (${(error as Error).message})`);
      }
      const item = itemOf(value, where);
      const row = collector.accept({ line: lineNumber, data: item.data, ownFilename: item.filename });
      if (row) startLines.push(await writer.append(`${JSON.stringify({ data: item.data, filename: row.name })}\n`));
    }
  } finally {
    await writer.close();
  }
  if (collector.rowCount === 0) throw new RowsError(`${collector.sourceName}: no rows`);
  return startLines;
}
