/**
 * A .json rows file: an array whose elements are `{data, filename?}` items or the rows' data itself,
 * sent as the batch's JSON `items`. (The file size is bounded before it is read: rows-file.ts.)
 */
import { readFile } from 'node:fs/promises';
import { itemOf, RowsError, type RowCollector } from './row-collector.js';

/** The items to send, each with its row's name. */
export async function prepareJsonRows(
  sourcePath: string,
  collector: RowCollector,
): Promise<{ data: Record<string, unknown>; filename: string }[]> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(sourcePath, 'utf8'));
  } catch (error) {
    throw new RowsError(`${collector.sourceName}: not JSON (${(error as Error).message})`);
  }
  if (!Array.isArray(value))
    throw new RowsError(`${collector.sourceName}: must be a JSON array of rows (use .ndjson for one row a line)`);
  if (value.length === 0) throw new RowsError(`${collector.sourceName}: no rows`);
  const items: { data: Record<string, unknown>; filename: string }[] = [];
  value.forEach((element, i) => {
    const item = itemOf(element, `${collector.sourceName} row ${i + 1}`);
    const row = collector.accept({ line: undefined, data: item.data, ownFilename: item.filename });
    if (row) items.push({ data: item.data, filename: row.name });
  });
  return items;
}
