/**
 * A batch's CSV in the studio (issue 40): read with csv-parse (the service's own parser, loaded with the
 * Batches screen only), its columns matched to the template's fields by name, and re-written with the
 * chosen names, ignored columns left out, as the `rows` file of the upload; row 1 typed as the service
 * types it (csv-cells.ts, imported, not copied) for a preview. Keeps which line of the re-written file is
 * which row, so a 422 (`rows › line › column`) is told by row and column as the user's file has them.
 * Pure, no DOM.
 */
import type { Field } from './api-types.js';
import type { PlaceNamer } from './messages.js';
import { FILENAME_COLUMN, typeCell } from '../../../src/batches/csv-cells.js';

export { FILENAME_COLUMN };

/** What an ignored column goes to. */
export const IGNORE = '';

/** Largest CSV the studio reads: the tab parses and re-writes it whole; a bigger export goes through `pressroom generate` or the API (up to 100 MiB). */
export const STUDIO_CSV_MAX_BYTES = 20 * 1024 * 1024;

export interface CsvTable {
  name: string;
  /** `,` or `;` (a spreadsheet set to a comma-decimal language writes semicolons). */
  delimiter: string;
  header: string[];
  rows: string[][];
  /** Each row's line in the file, as the service counts (where the row ends). */
  lines: number[];
}

/** The first line's separator: semicolons when it has more of them than commas. */
function delimiterOf(text: string): string {
  const first = text.slice(0, Math.max(0, text.indexOf('\n')) || text.length);
  return (first.match(/;/g)?.length ?? 0) > (first.match(/,/g)?.length ?? 0) ? ';' : ',';
}

/** The file's header and rows, or why it cannot be read (the parser's message names the line). */
export async function readCsv(name: string, text: string): Promise<CsvTable | string> {
  const { parse } = await import('csv-parse/browser/esm/sync');
  const delimiter = delimiterOf(text);
  let records: { record: string[]; info: { lines: number } }[];
  try {
    // The service's options (src/batches/batch-rows.ts): a BOM is dropped, empty lines skipped, every row as wide as the header.
    records = parse(text, {
      bom: true,
      skip_empty_lines: true,
      relax_column_count: false,
      info: true,
      delimiter,
    }) as unknown as typeof records;
  } catch (error) {
    return `${name} is not a readable CSV file: ${(error as Error).message}`;
  }
  const [head, ...rows] = records;
  if (!head) return `${name} is empty: the first row names the columns, each further row is one document.`;
  if (rows.length === 0) return `${name} has a header row and no rows: each row after the header is one document.`;
  return {
    name,
    delimiter,
    header: head.record.map((h) => h.trim()),
    rows: rows.map((r) => r.record),
    lines: rows.map((r) => r.info.lines),
  };
}

/** Lower case, letters and digits only: "Customer name" and "customer_name" meet. */
const loose = (text: string) =>
  text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}.]+/gu, '');

/**
 * Each column's target by name: a field whose key is the header, else one whose key or label reads the
 * same loosely, else the file-name column ("_filename", "filename"), else ignored. A target is taken
 * once, by the first column that names it.
 */
export function matchColumns(header: readonly string[], fields: readonly Field[]): string[] {
  const taken = new Set<string>();
  const take = (target: string | undefined) => {
    if (target === undefined || taken.has(target)) return undefined;
    taken.add(target);
    return target;
  };
  const targets: (string | undefined)[] = header.map((h) =>
    take(fields.find((f) => f.key === h)?.key ?? (h === FILENAME_COLUMN ? FILENAME_COLUMN : undefined)),
  );
  return targets.map((target, i) => {
    if (target !== undefined) return target;
    const name = loose(header[i]!);
    if (name === '') return IGNORE;
    const field = fields.find((f) => !taken.has(f.key) && (loose(f.key) === name || loose(f.label) === name));
    return take(field?.key) ?? (loose(FILENAME_COLUMN) === name ? take(FILENAME_COLUMN) : undefined) ?? IGNORE;
  });
}

/** The template's required fields no column goes to. */
export const unmatchedRequired = (targets: readonly string[], fields: readonly Field[]): Field[] =>
  fields.filter((f) => f.required && !targets.includes(f.key));

/** Targets two or more columns go to (the service refuses a header that names one twice). */
export const doubledTargets = (targets: readonly string[]): string[] => [
  ...new Set(targets.filter((t, i) => t !== IGNORE && targets.indexOf(t) !== i)),
];

/** A cell quoted as RFC 4180 has it: always quoted, a quote doubled (csv-parse reads it back exactly). */
const quote = (cell: string) => `"${cell.replace(/"/g, '""')}"`;
const lineBreaks = (text: string) => text.match(/\r\n|\r|\n/g)?.length ?? 0;

/** The upload: the file re-written with the chosen names, and which of its lines is which row (from 0). */
export interface RowsUpload {
  text: string;
  rowOfLine: Map<number, number>;
}

export function rewriteCsv(table: CsvTable, targets: readonly string[]): RowsUpload {
  const kept = targets.flatMap((t, i) => (t === IGNORE ? [] : [i]));
  const out = [kept.map((i) => quote(targets[i]!)).join(',')];
  const rowOfLine = new Map<number, number>();
  let line = 1;
  table.rows.forEach((row, index) => {
    const cells = kept.map((i) => row[i] ?? '');
    line += 1 + cells.reduce((n, cell) => n + lineBreaks(cell), 0);
    rowOfLine.set(line, index);
    out.push(cells.map(quote).join(','));
  });
  return { text: `${out.join('\n')}\n`, rowOfLine };
}

/** Row `index` as the service would read it: the data (cells typed by their fields), its file name, and each cell that does not fit. */
export function rowData(
  table: CsvTable,
  targets: readonly string[],
  fields: readonly Field[],
  index: number,
): { data: Record<string, unknown>; filename: string | null; faults: string[] } {
  const data: Record<string, unknown> = {};
  const faults: string[] = [];
  let filename: string | null = null;
  table.rows[index]?.forEach((cell, i) => {
    const target = targets[i] ?? IGNORE;
    if (target === IGNORE || cell === '') return;
    if (target === FILENAME_COLUMN) return void (filename = cell);
    const typed = typeCell(fields.find((f) => f.key === target)?.type, cell);
    if ('value' in typed) data[target] = typed.value;
    else faults.push(`“${table.header[i]}”: ${typed.fault.msg}`);
  });
  return { data, filename, faults };
}

/**
 * Names the place of a 422 about the upload as the user's file has it: `rows › line 4 › column hours`
 * → "Row 3 (line 4 of march.csv), column “Stunden” (Hours)".
 */
export function uploadPlace(
  table: CsvTable,
  targets: readonly string[],
  upload: RowsUpload,
  fields: readonly Field[],
): PlaceNamer {
  const column = (target: string) => {
    const index = targets.indexOf(target);
    const label = target === FILENAME_COLUMN ? 'file name' : (fields.find((f) => f.key === target)?.label ?? target);
    return index === -1 ? `${label} (no column)` : `column “${table.header[index]}” (${label})`;
  };
  return (loc) => {
    if (loc[0] !== 'rows')
      return (
        ({ template_id: 'Template', output: 'Output', filename: 'File name' } as Record<string, string>)[
          String(loc[0])
        ] ?? null
      );
    if (loc[1] !== 'line' || typeof loc[2] !== 'number') return `The file (${table.name})`;
    const row = upload.rowOfLine.get(loc[2]);
    const where =
      row === undefined
        ? loc[2] === 1
          ? `The header row of ${table.name}`
          : `Line ${loc[2]}`
        : `Row ${row + 1} (line ${table.lines[row]} of ${table.name})`;
    return loc[3] === 'column' && typeof loc[4] === 'string' ? `${where}, ${column(loc[4])}` : where;
  };
}
