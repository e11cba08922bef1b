/**
 * What every rows file shares once a row is read: its name (`--filename`, its own filename, or
 * `document-<row>`), the check that no two rows share a file, and `--resume`'s skip of a row whose
 * file is already on disk.
 */
import { filenameKey, FilenameTemplateError, sanitizeFilename, type FilenameTemplate } from '../filename-template.js';

/** A rows file the command cannot send: a parse error, a bad row, a name clash. Exit code 2. */
export class RowsError extends Error {}

/** One row sent as an item of the batch, in the batch's order. */
export interface SentRow {
  /** 1-based among the file's data rows (the header is not a row). */
  readonly rowNumber: number;
  /** The line of the rows file where the row is (ends, for a CSV record spanning lines); none in a .json array. */
  readonly line: number | undefined;
  /** The item's filename, without `.pdf`. */
  readonly name: string;
}

export interface RowCollectorOptions {
  /** The rows file as the user named it, for messages. */
  sourceName: string;
  template: FilenameTemplate | undefined;
  /** `--resume`: true when this name's file is already delivered. */
  isDelivered: (name: string) => boolean;
}

/** Names rows as they are read and keeps those to send. */
export class RowCollector {
  readonly sent: SentRow[] = [];
  skipped = 0;
  /** Row number by name key: names equal in any case clash (filenameKey). */
  private readonly rowOfName = new Map<string, { rowNumber: number; name: string }>();

  constructor(private readonly options: RowCollectorOptions) {}

  /** The rows file as the user named it. */
  get sourceName(): string {
    return this.options.sourceName;
  }

  /** The row's SentRow, or undefined when `--resume` skips it; throws RowsError for a bad name or a clash. */
  accept(row: {
    line: number | undefined;
    data: Readonly<Record<string, unknown>>;
    ownFilename: string | undefined;
  }): SentRow | undefined {
    const rowNumber = this.rowOfName.size + 1;
    const name = this.nameOf(rowNumber, row);
    const clash = this.rowOfName.get(filenameKey(name));
    if (clash !== undefined) {
      const both =
        clash.name === name
          ? `would both be ${name}.pdf`
          : `would be ${clash.name}.pdf and ${name}.pdf, one file on macOS and Windows`;
      throw new RowsError(
        `rows ${clash.rowNumber} and ${rowNumber} of ${this.options.sourceName} ${both}: make --filename (or the file names) unique`,
      );
    }
    this.rowOfName.set(filenameKey(name), { rowNumber, name });
    if (this.options.isDelivered(name)) {
      this.skipped++;
      return undefined;
    }
    const sent = { rowNumber, line: row.line, name };
    this.sent.push(sent);
    return sent;
  }

  /** Every row read so far, sent or skipped. */
  get rowCount(): number {
    return this.rowOfName.size;
  }

  private nameOf(
    rowNumber: number,
    row: { line: number | undefined; data: Readonly<Record<string, unknown>>; ownFilename: string | undefined },
  ): string {
    try {
      if (this.options.template) return this.options.template.nameFor(row.data);
      if (row.ownFilename) return sanitizeFilename(row.ownFilename);
      return `document-${rowNumber}`;
    } catch (error) {
      if (error instanceof FilenameTemplateError)
        throw new RowsError(`${describeRow({ rowNumber, line: row.line }, this.options.sourceName)}: ${error.message}`);
      throw error;
    }
  }
}

/**
 * An NDJSON line or JSON array element as an item: one whose `data` is an object is `{data, filename?}`
 * (other keys ignored), anything else is the row's data itself (the service's own rule for NDJSON).
 */
export function itemOf(value: unknown, where: string): { data: Record<string, unknown>; filename: string | undefined } {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new RowsError(`${where}: a row must be a JSON object`);
  const record = value as Record<string, unknown>;
  const wrapped =
    Object.hasOwn(record, 'data') &&
    record.data !== null &&
    typeof record.data === 'object' &&
    !Array.isArray(record.data);
  if (!wrapped) return { data: record, filename: undefined };
  return {
    data: record.data as Record<string, unknown>,
    filename: typeof record.filename === 'string' ? record.filename : undefined,
  };
}

/** "row 3 (rows.csv line 4)", or "row 3" for a row without a line. */
export function describeRow(row: { rowNumber: number; line: number | undefined }, sourceName: string): string {
  return row.line === undefined ? `row ${row.rowNumber}` : `row ${row.rowNumber} (${sourceName} line ${row.line})`;
}
