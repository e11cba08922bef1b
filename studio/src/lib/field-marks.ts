/**
 * Where a place in the data (a `loc` such as `["customer", "name"]` or `["lines", 1, "unit_code"]`) is
 * in the generated form, and what the form calls it: so a refusal or a missing required field is
 * marked at its input and named as the form names it, rows counted from 1 as the form counts them.
 * Pure, no DOM.
 */
import type { Field } from './api-types.js';

/** What the form shows at one input: a refusal or a missing required value. */
export interface FieldMark {
  tone: 'error' | 'warning';
  message: string;
}

/** Marks by the id of the input they belong to. */
export type FieldMarks = ReadonlyMap<string, readonly FieldMark[]>;

export type DataLoc = readonly (string | number)[];

/** The id of a field's input (`customer.name` → `data-customer_name`). */
export const fieldInputId = (key: string): string => `data-${key.replace(/[^A-Za-z0-9_-]/g, '_')}`;

/** The id of one row's input of an array field: the attribute's, or the row's own for a list of scalars. */
export const rowInputId = (key: string, index: number, item?: string): string =>
  `${fieldInputId(key)}-${index}${item === undefined ? '' : `-${item}`}`;

/** "Lines row 2", as the form labels a row. */
export const rowLabel = (field: Pick<Field, 'label'>, index: number): string => `${field.label} row ${index + 1}`;

/** The form's input for a place in the data, and its name there; `id` is null where the form has no input of its own (a whole row). */
export interface FormPlace {
  id: string | null;
  label: string;
}

/** The form's place for `loc`, or null when no field of the form holds it. */
export function formPlace(fields: readonly Field[], loc: DataLoc): FormPlace | null {
  const index = loc.findIndex((part) => typeof part === 'number');
  const head = (index === -1 ? loc : loc.slice(0, index)).join('.');
  const field = fields.find((f) => f.key === head);
  if (!field) return null;
  if (index === -1) return { id: fieldInputId(field.key), label: field.label };
  if (field.type !== 'array') return null;
  const row = loc[index] as number;
  const rest = loc.slice(index + 1);
  if (rest.length === 0)
    return { id: field.spec?.length ? null : rowInputId(field.key, row), label: rowLabel(field, row) };
  const name = rest.join('.');
  const item = field.spec?.find((s) => s.name === name);
  if (!item) return null;
  return { id: rowInputId(field.key, row, item.name), label: `${item.label || item.name} (${rowLabel(field, row)})` };
}

/**
 * A place in the data for a person: as the form names it ("Unit code (Lines row 2)"), else its path
 * with rows counted from 1 ("lines row 2 › unit_code"), never a 0-based index.
 */
export function describeLoc(fields: readonly Field[], loc: DataLoc): string {
  const place = formPlace(fields, loc);
  if (place) return place.label;
  if (loc.length === 0) return 'the data';
  return loc
    .map((part) => (typeof part === 'number' ? `row ${part + 1}` : part))
    .join(' › ')
    .replace(/ › row/g, ' row');
}

/** The value at `loc` (undefined when absent), read the way the form reads: nested objects first, then a literal dotted key. */
export function valueAt(data: unknown, loc: DataLoc): unknown {
  let value = data;
  for (let i = 0; i < loc.length; i++) {
    const part = loc[i]!;
    if (value === null || typeof value !== 'object') return undefined;
    if (typeof part === 'string' && !Array.isArray(value) && !Object.prototype.hasOwnProperty.call(value, part)) {
      // `{"customer.name": …}`: the rest of the string parts as one dotted key.
      const end = loc.findIndex((p, j) => j > i && typeof p === 'number');
      const dotted = loc.slice(i, end === -1 ? undefined : end).join('.');
      if (!Object.prototype.hasOwnProperty.call(value, dotted)) return undefined;
      value = (value as Record<string, unknown>)[dotted];
      i = (end === -1 ? loc.length : end) - 1;
      continue;
    }
    value = (value as Record<string | number, unknown>)[part];
  }
  return value;
}

/** A refusal about one place in the data, kept with the value it was refused for (shown while the value is unchanged). */
export interface Refusal {
  loc: DataLoc;
  message: string;
  /** JSON of the value at `loc` when it was refused (`undefined` when absent). */
  value: string | undefined;
}

/** Stamps each refused place with its value in the data that was sent. */
export function refusalsOf(items: readonly { loc: DataLoc; message: string }[], sent: unknown): Refusal[] {
  return items.map((item) => ({ ...item, value: JSON.stringify(valueAt(sent, item.loc)) }));
}

/** Whether the value at a refusal's place has changed since (then the refusal no longer describes it). */
export const isEditedSince = (refusal: Refusal, data: unknown): boolean =>
  JSON.stringify(valueAt(data, refusal.loc)) !== refusal.value;

/** Adds `mark` to the marks of input `id`. */
export function addMark(marks: Map<string, FieldMark[]>, id: string, mark: FieldMark): void {
  marks.set(id, [...(marks.get(id) ?? []), mark]);
}
