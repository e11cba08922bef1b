/**
 * A batch's rows (issue 40): from `items` (JSON), `items_csv` or `items_ndjson` (text or an uploaded
 * file), into `{data, filename}` items, each checked against the template's fields before anything is
 * charged. CSV cells are typed by the fields (number, integer, boolean, array as JSON); a row without a
 * required field, or with a value of the wrong type, is a fault. The first MAX_REPORTED_FAULTS faults
 * are the 422; the parse goes on only to count rows against the bound.
 */
import { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { expandDottedKeys } from '../documents/data-binding.js';
import { ValidationError, type ValidationIssue } from '../shared/errors.js';
import type { FieldDefinition } from '../templates/field-inference.js';
import { FILENAME_COLUMN, INTEGER, NUMBER, describeValue, typeCell } from './csv-cells.js';

/** One document of a batch. */
export interface BatchItem {
  data: Record<string, unknown>;
  filename: string | null;
}

/** Where the rows came from: their `loc` in a 422 says it. */
export type RowsSource =
  | { kind: 'items'; items: unknown[] }
  | { kind: 'csv'; field: string; text: string | Readable }
  | { kind: 'ndjson'; field: string; text: string | Readable };

/** Faults listed in one 422: enough to fix a file, short enough to read. */
export const MAX_REPORTED_FAULTS = 20;

const FILENAME = /^[A-Za-z0-9_.-]{1,100}$/;
const hasOwn = (value: object, key: string) => Object.prototype.hasOwnProperty.call(value, key);

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

/** The value at a dotted key of expanded data, or undefined. */
function valueAt(bound: unknown, key: string): unknown {
  let value = bound;
  for (const part of key.split('.')) {
    if (value === null || typeof value !== 'object' || !hasOwn(value, part)) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
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
  if (!field) return cell;
  const typed = typeCell(field.type, cell);
  if ('value' in typed) return typed.value;
  faults.add(loc, typed.fault.msg, typed.fault.type);
  return cell;
}

/** What reading rows needs: the template's fields and the most items a batch may have. */
export interface RowsContext {
  fields: readonly FieldDefinition[];
  maxItems: number;
}

function tooMany(loc: Loc, max: number): never {
  throw new ValidationError([
    {
      loc: ['body', ...loc],
      msg: `A batch has at most ${max} items; send the rest as another batch`,
      type: 'too_many_items',
    },
  ]);
}

function fromItems(items: unknown[], ctx: RowsContext, faults: Faults): BatchItem[] {
  if (items.length > ctx.maxItems) tooMany(['items'], ctx.maxItems);
  return items.map((raw, index) => {
    if (
      raw === null ||
      typeof raw !== 'object' ||
      Array.isArray(raw) ||
      !('data' in raw) ||
      raw.data === null ||
      typeof raw.data !== 'object' ||
      Array.isArray(raw.data)
    ) {
      faults.add(['items', index], 'Each item is an object {data: {…}, filename?}', 'model_type');
      return { data: {}, filename: null };
    }
    const item = raw as { data: Record<string, unknown>; filename?: unknown };
    checkRow(ctx.fields, item.data, (key) => ['items', index, 'data', key], faults);
    return { data: item.data, filename: checkFilename(item.filename, ['items', index, 'filename'], faults) };
  });
}

async function* lines(text: string | Readable): AsyncGenerator<string> {
  if (typeof text === 'string') {
    // Yield to the event loop every few thousand lines: a 50 MB text is not one long task.
    let start = 0;
    let n = 0;
    while (start <= text.length) {
      const end = text.indexOf('\n', start);
      yield text.slice(start, end === -1 ? text.length : end);
      if (end === -1) return;
      start = end + 1;
      if (++n % 2000 === 0) await new Promise((resolve) => setImmediate(resolve));
    }
    return;
  }
  let rest = '';
  for await (const chunk of text) {
    const parts = (rest + chunk.toString('utf8')).split('\n');
    rest = parts.pop()!;
    yield* parts;
  }
  yield rest;
}

async function fromNdjson(
  field: string,
  text: string | Readable,
  ctx: RowsContext,
  faults: Faults,
): Promise<BatchItem[]> {
  const items: BatchItem[] = [];
  let line = 0;
  for await (const raw of lines(text)) {
    line += 1;
    const trimmed = raw.trim();
    if (trimmed === '') continue;
    if (items.length === ctx.maxItems) tooMany([field], ctx.maxItems);
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch {
      faults.add([field, 'line', line], 'Not a JSON object', 'json_invalid');
      items.push({ data: {}, filename: null });
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      faults.add(
        [field, 'line', line],
        'Each line is a JSON object: {data, filename?} or the data itself',
        'model_type',
      );
      items.push({ data: {}, filename: null });
      continue;
    }
    const wrapped =
      'data' in value && typeof value.data === 'object' && value.data !== null && !Array.isArray(value.data);
    const data = (wrapped ? (value as { data: Record<string, unknown> }).data : value) as Record<string, unknown>;
    const at = line;
    checkRow(ctx.fields, data, (key) => [field, 'line', at, 'data', key], faults);
    items.push({
      data,
      filename: wrapped
        ? checkFilename((value as { filename?: unknown }).filename, [field, 'line', line, 'filename'], faults)
        : null,
    });
  }
  return items;
}

async function fromCsv(field: string, text: string | Readable, ctx: RowsContext, faults: Faults): Promise<BatchItem[]> {
  const byKey = new Map(ctx.fields.map((f) => [f.key, f]));
  const parser = (typeof text === 'string' ? Readable.from([text]) : text).pipe(
    parse({ bom: true, relax_column_count: false, skip_empty_lines: true, info: true }),
  );
  const items: BatchItem[] = [];
  let header: string[] | undefined;
  try {
    for await (const record of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      const line = record.info.lines;
      if (!header) {
        header = record.record.map((h) => h.trim());
        const seen = new Set<string>();
        for (const name of header) {
          if (name === '') faults.add([field, 'line', line], 'A column has no name in the header row', 'csv_header');
          else if (seen.has(name))
            faults.add(
              [field, 'line', line, 'column', name],
              'This column appears twice in the header row',
              'csv_header',
            );
          seen.add(name);
        }
        continue;
      }
      if (items.length === ctx.maxItems) tooMany([field], ctx.maxItems);
      const data: Record<string, unknown> = {};
      let filename: string | null = null;
      record.record.forEach((cell, i) => {
        const name = header![i]!;
        if (name === FILENAME_COLUMN)
          return void (filename = checkFilename(cell, [field, 'line', line, 'column', name], faults));
        if (cell === '') return; // an empty cell is a missing value
        data[name] = typedCell(byKey.get(name), cell, [field, 'line', line, 'column', name], faults);
      });
      checkRow(ctx.fields, data, (key) => [field, 'line', line, 'column', key], faults, false);
      items.push({ data, filename });
    }
  } catch (error) {
    if (error instanceof ValidationError) throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new ValidationError([
      { loc: ['body', field], msg: `Not a readable CSV file: ${message}`, type: 'csv_invalid' },
    ]);
  }
  if (!header)
    throw new ValidationError([
      { loc: ['body', field], msg: 'The CSV has no header row naming the fields', type: 'csv_header' },
    ]);
  return items;
}

/** Reads and checks every row; a 422 listing the first faults, or the items. */
export async function readRows(source: RowsSource, ctx: RowsContext): Promise<BatchItem[]> {
  const faults = new Faults();
  const items =
    source.kind === 'items'
      ? fromItems(source.items, ctx, faults)
      : source.kind === 'csv'
        ? await fromCsv(source.field, source.text, ctx, faults)
        : await fromNdjson(source.field, source.text, ctx, faults);
  faults.throwIfAny();
  if (items.length === 0)
    throw new ValidationError([
      {
        loc: ['body', source.kind === 'items' ? 'items' : source.field],
        msg: 'A batch needs at least one item',
        type: 'too_short',
      },
    ]);
  return items;
}
