/**
 * A batch's rows (issue 40): from `items` (JSON), `items_csv` or `items_ndjson` (text or an uploaded
 * file), into items checked against the template's fields before anything is charged. CSV cells are
 * typed by the fields (number, integer, boolean, array as JSON); a row without a required field, or
 * with a value of the wrong type, is a fault. The first MAX_REPORTED_FAULTS faults are the 422; the
 * parse goes on only to count rows against the bound.
 *
 * Checked as they stream (issue 49): each row is bounded as it is read (columns, cell and row bytes,
 * all rows' data; batch-bounds.ts), counted against the most items and against the account's credits
 * (a 402 at the first row it cannot pay for), and written to a spool file on disk in the form its job
 * row stores (batch-spool.ts). So one upload holds about one row and the parser's buffers in memory,
 * and the event loop gets a turn every ROWS_PER_TURN rows.
 */
import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { parse } from 'csv-parse';
import { expandDottedKeys, valueAt } from '../documents/data-binding.js';
import { AppError, ValidationError, type ValidationIssue } from '../shared/errors.js';
import type { FieldDefinition } from '../templates/field-inference.js';
import {
  BATCH_MAX_CELL_BYTES,
  BATCH_MAX_COLUMNS,
  BATCH_MAX_DATA_BYTES,
  BATCH_MAX_ROW_BYTES,
  ROWS_PER_TURN,
  TEXT_PIECE_CHARS,
} from './batch-bounds.js';
import { RowSpool } from './batch-spool.js';
import { FILENAME_COLUMN, INTEGER, NUMBER, describeValue, typeCell } from './csv-cells.js';

/** Where the rows came from: their `loc` in a 422 says it. */
export type RowsSource =
  | { kind: 'items'; items: unknown[] }
  | { kind: 'csv'; field: string; text: string | Readable }
  | { kind: 'ndjson'; field: string; text: string | Readable };

/** Faults listed in one 422: enough to fix a file, short enough to read. */
export const MAX_REPORTED_FAULTS = 20;

/** How deep an NDJSON row may nest (a JSON body's own bound, http/json-body). */
const MAX_ROW_DEPTH = 64;

const FILENAME = /^[A-Za-z0-9_.-]{1,100}$/;
const MiB = 1024 * 1024;
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

type Loc = (string | number)[];

/** Collects faults; throws the 422 once the rows are read. */
class Faults {
  readonly issues: ValidationIssue[] = [];
  count = 0;
  add(loc: Loc, msg: string, type: string): void {
    this.count += 1;
    if (this.issues.length < MAX_REPORTED_FAULTS) this.issues.push({ loc: ['body', ...loc], msg, type });
  }
  throwIfAny(): void {
    if (this.count === 0) return;
    const more =
      this.count > this.issues.length
        ? ` (${this.count} faults in all; the first ${this.issues.length} are listed)`
        : '';
    if (more)
      this.issues[this.issues.length - 1] = {
        ...this.issues[this.issues.length - 1]!,
        msg: this.issues[this.issues.length - 1]!.msg + more,
      };
    throw new ValidationError(this.issues);
  }
}

/** Why `value` does not fit a field of `type`, or null when it does (numbers may come as numeric text). */
function typeFault(type: FieldDefinition['type'], value: unknown): { msg: string; type: string } | null {
  switch (type) {
    case 'integer':
      return (typeof value === 'number' && Number.isInteger(value)) ||
        (typeof value === 'string' && INTEGER.test(value.trim()))
        ? null
        : { msg: `Expected a whole number, got ${describeValue(value)}`, type: 'integer_type' };
    case 'number':
      return (typeof value === 'number' && Number.isFinite(value)) ||
        (typeof value === 'string' && NUMBER.test(value.trim()))
        ? null
        : { msg: `Expected a number, got ${describeValue(value)}`, type: 'number_type' };
    case 'boolean':
      return typeof value === 'boolean'
        ? null
        : { msg: `Expected true or false, got ${describeValue(value)}`, type: 'bool_type' };
    case 'array':
      return Array.isArray(value) ? null : { msg: `Expected an array, got ${describeValue(value)}`, type: 'list_type' };
    default:
      return value !== null && typeof value === 'object'
        ? { msg: `Expected text, got ${describeValue(value)}`, type: 'string_type' }
        : null;
  }
}

/** Checks one row's data against the fields; `at(key)` is the fault's location. CSV cells were typed (and judged) as they were read. */
function checkRow(
  fields: readonly FieldDefinition[],
  data: Record<string, unknown>,
  at: (key: string) => Loc,
  faults: Faults,
  checkTypes = true,
): void {
  const bound = expandDottedKeys(data);
  for (const field of fields) {
    const value = valueAt(bound, field.key);
    if (value === undefined || value === null || value === '') {
      if (field.required) faults.add(at(field.key), 'Field required by the template', 'missing');
      continue;
    }
    const fault = checkTypes ? typeFault(field.type, value) : null;
    if (fault) faults.add(at(field.key), fault.msg, fault.type);
  }
}

function checkFilename(value: unknown, loc: Loc, faults: Faults): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value === 'string' && FILENAME.test(value)) return value;
  faults.add(loc, 'A file name is 1–100 characters of A-Z, a-z, 0-9, _ . - (without .pdf)', 'filename');
  return null;
}

/** A CSV cell as the field's type wants it (csv-cells.ts); text for columns no field declares. */
function typedCell(field: FieldDefinition | undefined, cell: string, loc: Loc, faults: Faults): unknown {
  if (cell.length > BATCH_MAX_CELL_BYTES) {
    faults.add(
      loc,
      `A cell holds at most ${BATCH_MAX_CELL_BYTES / 1024} KiB; this one has ${cell.length} characters`,
      'cell_too_long',
    );
    return '';
  }
  if (!field) return cell;
  const typed = typeCell(field.type, cell);
  if ('value' in typed) return typed.value;
  faults.add(loc, typed.fault.msg, typed.fault.type);
  return cell;
}

/** True when `value` nests deeper than `max` objects and arrays (checked without recursion). */
function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (node === null || typeof node !== 'object') continue;
    if (depth > max) return true;
    for (const child of Object.values(node))
      if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
  }
  return false;
}

/** What reading rows needs: the template's fields, the most items, and the credits they may use. */
export interface RowsContext {
  fields: readonly FieldDefinition[];
  maxItems: number;
  /** Why `maxItems`, when not the batch bound itself (a merged PDF's): the 422's message. */
  maxItemsReason?: (max: number) => string;
  /** The account's credits when the read began: a row past them is a 402 as it is read. Undefined: not checked (a retried request's stored answer may be replayed). */
  credits?: number;
}

/** The rows, checked and spooled: `count` items, row 1's data (the delivery checks run on it), and the spool to queue them from. */
export interface CheckedRows {
  count: number;
  first: Record<string, unknown>;
  spool: RowSpool;
}

/** Counts, bounds and spools the rows as they are read; the faults go to the 422 at the end. */
class RowSink {
  readonly faults = new Faults();
  count = 0;
  first: Record<string, unknown> | undefined;
  private bytes = 0;

  constructor(
    private readonly ctx: RowsContext,
    readonly spool: RowSpool,
    private readonly field: string,
  ) {}

  /** The template's fields the rows are checked against. */
  get fields(): readonly FieldDefinition[] {
    return this.ctx.fields;
  }

  /** One row read; `at` is where the row is, for a fault. Refuses at once past a bound the rest cannot undo. */
  async add(data: Record<string, unknown>, filename: string | null, at: Loc): Promise<void> {
    this.count += 1;
    if (this.count > this.ctx.maxItems) {
      const msg =
        this.ctx.maxItemsReason?.(this.ctx.maxItems) ??
        `A batch has at most ${this.ctx.maxItems} items; send the rest as another batch`;
      throw new ValidationError([{ loc: ['body', this.field], msg, type: 'too_many_items' }]);
    }
    const credits = this.ctx.credits;
    if (credits !== undefined && this.count > credits) {
      this.faults.throwIfAny();
      throw new AppError(
        'INSUFFICIENT_CREDITS',
        `This batch needs a credit per item: more than the ${credits} the account has (row ${this.count} was reached). Add credits, or send fewer items; nothing was charged.`,
      );
    }
    const json = JSON.stringify(data);
    const size = Buffer.byteLength(json);
    if (size > BATCH_MAX_ROW_BYTES)
      this.faults.add(
        at,
        `A row's data is at most ${BATCH_MAX_ROW_BYTES / MiB} MiB; this one has ${size} bytes`,
        'row_too_long',
      );
    this.bytes += size;
    if (this.bytes > BATCH_MAX_DATA_BYTES) {
      throw new ValidationError([
        {
          loc: ['body', this.field],
          msg: `A batch's rows hold at most ${BATCH_MAX_DATA_BYTES / MiB} MiB of data in all (row ${this.count} passed it); send the rest as another batch`,
          type: 'too_much_data',
        },
      ]);
    }
    this.first ??= data;
    // Past a fault the batch is a 422: the rest is read only to count faults and rows.
    if (this.faults.count === 0) await this.spool.add({ filename, data: json });
    if (this.count % ROWS_PER_TURN === 0) await turn();
  }
}

async function fromItems(items: unknown[], sink: RowSink): Promise<void> {
  for (const [index, raw] of items.entries()) {
    if (
      raw === null ||
      typeof raw !== 'object' ||
      Array.isArray(raw) ||
      !('data' in raw) ||
      raw.data === null ||
      typeof raw.data !== 'object' ||
      Array.isArray(raw.data)
    ) {
      sink.faults.add(['items', index], 'Each item is an object {data: {…}, filename?}', 'model_type');
      await sink.add({}, null, ['items', index]);
      continue;
    }
    const item = raw as { data: Record<string, unknown>; filename?: unknown };
    checkRow(sink.fields, item.data, (key) => ['items', index, 'data', key], sink.faults);
    await sink.add(item.data, checkFilename(item.filename, ['items', index, 'filename'], sink.faults), [
      'items',
      index,
    ]);
  }
}

/** Text in pieces, a turn of the event loop between two: a 10 MiB string is not parsed in one task. */
async function* pieces(text: string): AsyncGenerator<string> {
  for (let start = 0; start < text.length; start += TEXT_PIECE_CHARS) {
    yield text.slice(start, start + TEXT_PIECE_CHARS);
    await turn();
  }
}

const asStream = (text: string | Readable): Readable => (typeof text === 'string' ? Readable.from(pieces(text)) : text);

function rowTooLong(field: string, line: number | undefined): ValidationError {
  return new ValidationError([
    {
      loc: ['body', field, ...(line === undefined ? [] : ['line', line])],
      msg: `A row is at most ${BATCH_MAX_ROW_BYTES / MiB} MiB; this one is longer (an unclosed quote, or a file without line breaks, makes the rest of the file one row)`,
      type: 'row_too_long',
    },
  ]);
}

/** The lines of NDJSON text, decoded across chunk boundaries; a line past the row bound is refused before it is held. */
async function* lines(text: string | Readable, field: string): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let n = 0;
  for await (const chunk of asStream(text)) {
    const parts = (rest + (typeof chunk === 'string' ? chunk : decoder.write(chunk as Buffer))).split('\n');
    rest = parts.pop()!;
    for (const part of parts) {
      n += 1;
      if (part.length > BATCH_MAX_ROW_BYTES) throw rowTooLong(field, n);
      yield part;
    }
    if (rest.length > BATCH_MAX_ROW_BYTES) throw rowTooLong(field, n + 1);
  }
  yield rest + decoder.end();
}

async function fromNdjson(field: string, text: string | Readable, sink: RowSink): Promise<void> {
  let line = 0;
  for await (const raw of lines(text, field)) {
    line += 1;
    const trimmed = (line === 1 ? raw.replace(/^\uFEFF/, '') : raw).trim();
    if (trimmed === '') continue;
    const at: Loc = [field, 'line', line];
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch {
      value = undefined;
    }
    if (value === undefined) sink.faults.add(at, 'Not a JSON object', 'json_invalid');
    else if (value === null || typeof value !== 'object' || Array.isArray(value))
      sink.faults.add(at, 'Each line is a JSON object: {data, filename?} or the data itself', 'model_type');
    else if (nestsDeeperThan(value, MAX_ROW_DEPTH))
      sink.faults.add(at, `A row nests at most ${MAX_ROW_DEPTH} levels of objects and arrays`, 'json_too_deep');
    else {
      const wrapped =
        'data' in value && typeof value.data === 'object' && value.data !== null && !Array.isArray(value.data);
      const data = (wrapped ? (value as { data: Record<string, unknown> }).data : value) as Record<string, unknown>;
      checkRow(sink.fields, data, (key) => [...at, 'data', key], sink.faults);
      await sink.add(
        data,
        wrapped ? checkFilename((value as { filename?: unknown }).filename, [...at, 'filename'], sink.faults) : null,
        at,
      );
      continue;
    }
    await sink.add({}, null, at);
  }
}

/** The header row's column names; refuses a header past the column bound at once. */
function headerOf(record: string[], field: string, line: number, faults: Faults): string[] {
  if (record.length > BATCH_MAX_COLUMNS) {
    throw new ValidationError([
      {
        loc: ['body', field, 'line', line],
        msg: `A CSV has at most ${BATCH_MAX_COLUMNS} columns; this header has ${record.length}`,
        type: 'too_many_columns',
      },
    ]);
  }
  const header = record.map((h) => h.trim());
  const seen = new Set<string>();
  for (const name of header) {
    if (name === '') faults.add([field, 'line', line], 'A column has no name in the header row', 'csv_header');
    else if (seen.has(name))
      faults.add([field, 'line', line, 'column', name], 'This column appears twice in the header row', 'csv_header');
    seen.add(name);
  }
  return header;
}

async function fromCsv(field: string, text: string | Readable, sink: RowSink): Promise<void> {
  const byKey = new Map(sink.fields.map((f) => [f.key, f]));
  const source = asStream(text);
  const parser = source.pipe(
    parse({
      bom: true,
      relax_column_count: false,
      skip_empty_lines: true,
      info: true,
      max_record_size: BATCH_MAX_ROW_BYTES,
    }),
  );
  // pipe() does not pass an upload's failure on (a file past its size limit): the read would wait for ever.
  source.once('error', (error) => parser.destroy(error));
  let header: string[] | undefined;
  try {
    for await (const record of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      const line = record.info.lines;
      if (!header) {
        header = headerOf(record.record, field, line, sink.faults);
        continue;
      }
      const data: Record<string, unknown> = {};
      let filename: string | null = null;
      record.record.forEach((cell, i) => {
        const name = header![i]!;
        if (name === FILENAME_COLUMN)
          return void (filename = checkFilename(cell, [field, 'line', line, 'column', name], sink.faults));
        if (cell === '') return; // an empty cell is a missing value
        data[name] = typedCell(byKey.get(name), cell, [field, 'line', line, 'column', name], sink.faults);
      });
      checkRow(sink.fields, data, (key) => [field, 'line', line, 'column', key], sink.faults, false);
      await sink.add(data, filename, [field, 'line', line]);
    }
  } catch (error) {
    source.unpipe(parser);
    parser.destroy();
    if (error instanceof ValidationError || error instanceof AppError) throw error;
    if ((error as { code?: string }).code === 'CSV_MAX_RECORD_SIZE')
      throw rowTooLong(field, (error as { lines?: number }).lines);
    const message = error instanceof Error ? error.message : String(error);
    throw new ValidationError([
      { loc: ['body', field], msg: `Not a readable CSV file: ${message}`, type: 'csv_invalid' },
    ]);
  }
  if (!header)
    throw new ValidationError([
      { loc: ['body', field], msg: 'The CSV has no header row naming the fields', type: 'csv_header' },
    ]);
}

/**
 * Reads, checks and spools every row: a 422 listing the first faults (or the bound passed), a 402 at
 * the first row past the account's credits, or the checked rows. The caller removes the spool.
 */
export async function readRows(source: RowsSource, ctx: RowsContext): Promise<CheckedRows> {
  const field = source.kind === 'items' ? 'items' : source.field;
  const spool = await RowSpool.create();
  try {
    const sink = new RowSink(ctx, spool, field);
    if (source.kind === 'items') await fromItems(source.items, sink);
    else if (source.kind === 'csv') await fromCsv(field, source.text, sink);
    else await fromNdjson(field, source.text, sink);
    sink.faults.throwIfAny();
    if (sink.count === 0)
      throw new ValidationError([{ loc: ['body', field], msg: 'A batch needs at least one item', type: 'too_short' }]);
    await spool.finish();
    return { count: sink.count, first: sink.first!, spool };
  } catch (error) {
    await spool.remove();
    throw error;
  }
}
