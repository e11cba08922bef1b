/**
 * The generated input form's data model: a field key such as `customer.name` addresses
 * `data.customer.name` (the server treats a dotted key and the nested object alike, the nested one
 * winning), so the form reads both and always writes the nested shape. Pure functions, no DOM.
 */
import type { Field, FieldSpec } from './api-types.js';

export type DataObject = Record<string, unknown>;

const isObject = (value: unknown): value is DataObject => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The value a field key addresses: the nested path first, then a literal dotted key. */
export function readField(data: DataObject, key: string): unknown {
  let current: unknown = data;
  for (const part of key.split('.')) {
    if (!isObject(current) || !(part in current)) {
      current = undefined;
      break;
    }
    current = current[part];
  }
  return current !== undefined ? current : data[key];
}

/**
 * A copy of `data` with `key` set (nested) to `value`; `undefined` removes it. A literal dotted key of
 * the same name is dropped so the two spellings never disagree.
 */
export function writeField(data: DataObject, key: string, value: unknown): DataObject {
  const parts = key.split('.');
  const next: DataObject = { ...data };
  if (parts.length > 1) delete next[key];
  let target = next;
  for (const part of parts.slice(0, -1)) {
    const child = target[part];
    const copy: DataObject = isObject(child) ? { ...child } : {};
    target[part] = copy;
    target = copy;
  }
  const leaf = parts[parts.length - 1]!;
  if (value === undefined) delete target[leaf];
  else target[leaf] = value;
  return next;
}

/** Text of a number input → a number, or undefined when empty or not a number. */
export function parseNumberInput(text: string, integer: boolean): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  const value = Number(trimmed);
  if (!Number.isFinite(value)) return undefined;
  return integer ? Math.trunc(value) : value;
}

/** A value shown in a text or number input. */
export function inputText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** The rows of an array field: objects for fields with a spec, scalars otherwise. */
export function readRows(data: DataObject, field: Field): unknown[] {
  const value = readField(data, field.key);
  return Array.isArray(value) ? value : [];
}

/** A new, empty row for an array field. */
export function emptyRow(field: Field): unknown {
  if (!field.spec || field.spec.length === 0) return '';
  const row: DataObject = {};
  for (const item of field.spec) row[item.name] = emptyItemValue(item);
  return row;
}

function emptyItemValue(item: FieldSpec): unknown {
  switch (item.type) {
    case 'number':
      return 0;
    case 'boolean':
      return false;
    case 'array':
      return [];
    default:
      return '';
  }
}

/** Converts what the user typed for one row attribute into its spec type. */
export function parseItemInput(item: FieldSpec, text: string): unknown {
  switch (item.type) {
    case 'number':
      return parseNumberInput(text, false);
    case 'array':
      return text.trim() === '' ? [] : text.split(',').map((part) => part.trim()).filter((part) => part !== '');
    default:
      return text;
  }
}

/** Text for one row attribute's input. */
export function itemInputText(item: FieldSpec, value: unknown): string {
  if (item.type === 'array' && Array.isArray(value)) return value.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(', ');
  return inputText(value);
}

/** Required fields that have no value in `data` (empty strings and empty lists count as missing). */
export function missingRequired(fields: readonly Field[], data: DataObject): Field[] {
  return fields.filter((field) => {
    if (!field.required || field.type === 'boolean') return false;
    const value = readField(data, field.key);
    return value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);
  });
}

/** Parses the JSON pane: an object, or the error to show. */
export function parseDataJson(text: string): { data: DataObject } | { error: string } {
  if (text.trim() === '') return { data: {} };
  try {
    const parsed: unknown = JSON.parse(text);
    if (!isObject(parsed)) return { error: 'Sample data must be a JSON object, like {"name": "Ada"}.' };
    return { data: parsed };
  } catch (error) {
    return { error: `Invalid JSON: ${(error as Error).message}` };
  }
}

/** The JSON pane's text for `data`. */
export function formatDataJson(data: DataObject): string {
  return JSON.stringify(data, null, 2);
}
