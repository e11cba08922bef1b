/**
 * `--filename '{{ invoice_number }}-{{ customer.name }}'`: names each row's PDF from its own data, on the
 * client. Deliberately tiny: `{{ dotted.key }}` substitution and literal text, nothing else (no filters,
 * no expressions); the result is sanitized to the API's filename alphabet `[A-Za-z0-9_.-]` (every run
 * of other characters becomes one `_`), a trailing `.pdf` is dropped and it is cut to 100 characters.
 */

import { nameKey } from '../batches/unique-names.js';

/**
 * What two rows' file names clash on, the service's own rule (batches/unique-names.ts, pure): `Report`
 * and `report` are one file on macOS and Windows, so they clash too.
 */
export const filenameKey: (name: string) => string = nameKey;

/** The API's longest item filename (docs/batches.md). */
export const MAX_FILENAME_CHARS = 100;
/** Longest `--filename` accepted: a name is at most 100 characters, a template a little more. */
const MAX_TEMPLATE_CHARS = 1000;
const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_$-]+(?:\.[A-Za-z0-9_$-]+)*)\s*\}\}/g;

/** A `--filename` that is not `{{ dotted.key }}` and text, or a row it cannot name. */
export class FilenameTemplateError extends Error {}

type Part = { text: string } | { key: string };

/** A compiled `--filename` template. */
export interface FilenameTemplate {
  readonly source: string;
  /** The sanitized name (without `.pdf`) for one row's data; throws FilenameTemplateError when a key has no value. */
  nameFor(data: Readonly<Record<string, unknown>>): string;
}

/** Parses `source`; throws FilenameTemplateError naming what is not allowed. */
export function compileFilenameTemplate(source: string): FilenameTemplate {
  if (source.length === 0 || source.length > MAX_TEMPLATE_CHARS) {
    throw new FilenameTemplateError(`--filename must be 1 to ${MAX_TEMPLATE_CHARS} characters`);
  }
  const parts: Part[] = [];
  let last = 0;
  for (const match of source.matchAll(PLACEHOLDER)) {
    parts.push({ text: source.slice(last, match.index) }, { key: match[1]! });
    last = match.index + match[0].length;
  }
  parts.push({ text: source.slice(last) });
  const stray = parts.find(
    (p): p is { text: string } => 'text' in p && (p.text.includes('{{') || p.text.includes('}}')),
  );
  if (stray) {
    throw new FilenameTemplateError(
      `--filename: only {{ dotted.key }} placeholders are supported (no filters or expressions), near "${stray.text.slice(0, 40)}"`,
    );
  }
  return {
    source,
    nameFor(data) {
      const text = parts.map((part) => ('text' in part ? part.text : valueText(data, part.key))).join('');
      return sanitizeFilename(text);
    },
  };
}

/** `name` in the API's filename alphabet, without `.pdf`, at most 100 characters; throws when nothing is left. */
export function sanitizeFilename(name: string): string {
  const clean = name
    .replace(/[^A-Za-z0-9_.-]+/g, '_')
    .replace(/\.pdf$/i, '')
    .slice(0, MAX_FILENAME_CHARS);
  if (clean.length === 0 || /^\.+$/.test(clean))
    throw new FilenameTemplateError(`the file name "${name.slice(0, 40)}" has no usable characters ([A-Za-z0-9_.-])`);
  return clean;
}

/**
 * The text of `key` in `data`: a flat key first (a CSV header `customer.name` is one key), then the
 * dotted path through nested objects. Own properties only, so `constructor` or `__proto__` find nothing.
 */
function valueText(data: Readonly<Record<string, unknown>>, key: string): string {
  let value: unknown = Object.hasOwn(data, key) ? data[key] : undefined;
  if (value === undefined) {
    value = data;
    for (const segment of key.split('.')) {
      value =
        value !== null && typeof value === 'object' && Object.hasOwn(value, segment)
          ? (value as Record<string, unknown>)[segment]
          : undefined;
    }
  }
  if (typeof value === 'string' && value.length > 0) return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (value === undefined || value === null || value === '')
    throw new FilenameTemplateError(`{{ ${key} }} has no value`);
  throw new FilenameTemplateError(
    `{{ ${key} }} is ${Array.isArray(value) ? 'a list' : 'an object'}, not text or a number`,
  );
}
