/**
 * The generated input form's data model: a field key such as `customer.name` addresses
 * `data.customer.name` (the server treats a dotted key and the nested object alike, the nested one
 * winning), so the form reads both and always writes the nested shape. Pure functions, no DOM.
 */
import type { Field, FieldSpec } from './api-types.js';
import type { DocumentWarning } from './warnings.js';
// The service's own check, not a copy (it imports nothing the bundle cannot carry).
import { checkRequiredFields, missingRequiredFields } from '../../../src/documents/required-fields.js';

export type DataObject = Record<string, unknown>;

const isObject = (value: unknown): value is DataObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

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

const NUMBER_TEXT = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const INTEGER_TEXT = /^[+-]?\d+$/;

/** What a number input's text is: empty, a number of the field's type, or refused with a reason. */
export type NumberInputCheck =
  | { ok: true; value: number | undefined }
  | { ok: false; message: string; suggestion?: string };

/**
 * Checks a number input as JSON would read it: digits, one dot for decimals, an optional exponent;
 * an integer field takes whole numbers only. Anything else (`1.234,56`, `12 €`, `1,5`) is refused,
 * never dropped or truncated; a locale spelling that can be read one way only comes back as a
 * `suggestion` the user can take (`1.234,56` → `1234.56`).
 */
export function checkNumberInput(text: string, integer: boolean): NumberInputCheck {
  const trimmed = text.trim();
  if (trimmed === '') return { ok: true, value: undefined };
  if ((integer ? INTEGER_TEXT : NUMBER_TEXT).test(trimmed)) {
    const value = Number(trimmed);
    if (Number.isFinite(value)) return { ok: true, value };
  }
  const suggestion = numberSuggestion(trimmed, integer);
  const message = integer
    ? 'Not a whole number: digits only, e.g. 42'
    : 'Not a number: a dot for decimals and no thousands separators, e.g. 1234.56';
  return suggestion === undefined ? { ok: false, message } : { ok: false, message, suggestion };
}

/** The number a locale spelling means when only one reading is possible, as the input should hold it. */
export function numberSuggestion(text: string, integer: boolean): string | undefined {
  let plain: string | undefined;
  // 1.234,56 or 1.234.567 (dots group thousands, a comma marks decimals)
  if (/^[+-]?\d{1,3}(\.\d{3})+(,\d+)?$/.test(text)) plain = text.replace(/\./g, '').replace(',', '.');
  // 1,234.56 or 1,234,567 (commas group thousands, a dot marks decimals): one group alone (1,234) is ambiguous
  else if (/^[+-]?\d{1,3}(,\d{3}){2,}(\.\d+)?$/.test(text) || /^[+-]?\d{1,3}(,\d{3})+\.\d+$/.test(text))
    plain = text.replace(/,/g, '');
  // 12,5 (a decimal comma), unless it could be a thousands group (1,234)
  else if (/^[+-]?\d+,\d+$/.test(text) && !/^[+-]?\d{1,3},\d{3}$/.test(text)) plain = text.replace(',', '.');
  if (plain === undefined || !NUMBER_TEXT.test(plain)) return undefined;
  if (integer && !INTEGER_TEXT.test(plain)) return undefined;
  return plain;
}

/** Text of a number input → the number, or undefined when empty or refused (see checkNumberInput). */
export function parseNumberInput(text: string, integer: boolean): number | undefined {
  const checked = checkNumberInput(text, integer);
  return checked.ok ? checked.value : undefined;
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
      return text.trim() === ''
        ? []
        : text
            .split(',')
            .map((part) => part.trim())
            .filter((part) => part !== '');
    default:
      return text;
  }
}

/** Text for one row attribute's input. */
export function itemInputText(item: FieldSpec, value: unknown): string {
  if (item.type === 'array' && Array.isArray(value))
    return value.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(', ');
  return inputText(value);
}

type ServiceFields = Parameters<typeof missingRequiredFields>[0];

/** The form's fields as the service's required-field check takes them (it reads `key` and `required`). */
const asServiceFields = (fields: readonly Field[]): ServiceFields =>
  fields.map((f) => ({
    key: f.key,
    label: f.label,
    type: f.type ?? 'string',
    required: f.required ?? false,
    helpText: f.helpText ?? null,
    spec: null,
  }));

/**
 * Required fields that have no value in `data`, by the service's own rule (missing, `null` or `""` at
 * the field's key: src/documents/required-fields.ts), so the form, the preview and Run give the verdict
 * the API gives. `provided`: top-level names the service fills itself (`einvoice`, when Run attaches one).
 */
export function missingRequired(fields: readonly Field[], data: DataObject, provided: readonly string[] = []): Field[] {
  const missing = new Set(missingRequiredFields(asServiceFields(fields), data, provided));
  return fields.filter((f) => missing.has(f.key));
}

/** The warnings a lenient template's document carries for them: the service's own words (MISSING_REQUIRED_FIELD). */
export function missingRequiredWarnings(fields: readonly Field[], data: DataObject): DocumentWarning[] {
  return checkRequiredFields({ fields: asServiceFields(fields), strict: false }, data);
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

/**
 * The data with only the top-level keys some field uses (`customer` for `customer.name`), and the ones
 * dropped: a starter's example values leave once the template stops using them, instead of staying in
 * the saved sample data and every copied snippet. `einvoice` is the service's to fill, and is kept.
 */
export function keepUsedKeys(
  data: DataObject,
  fields: readonly { key: string }[],
): { data: DataObject; dropped: DataObject } {
  const used = new Set(fields.map((f) => f.key.split('.')[0]!));
  const kept: DataObject = {};
  const dropped: DataObject = {};
  for (const [key, value] of Object.entries(data)) (used.has(key) || key === 'einvoice' ? kept : dropped)[key] = value;
  return { data: kept, dropped };
}
