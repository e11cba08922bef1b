/**
 * A form template's `data` checked against its form before the charge (documents.ts prepare), and turned
 * into what the form thread sets (form-filling.ts). Keys are the fields' full names (`customer.name`);
 * nested objects are read as dotted keys too, as for HTML templates. Refused (422 at
 * `["body","data","<field name>"]`, every problem at once): a missing required field (absent, null or
 * ""), a checkbox given anything but a boolean, a choice field given a value it does not list, a number
 * field given what is not a number, a text longer than the field's /MaxLen, and a text no font here
 * draws (one font per field: the watermark's rule, finishing/requested/watermark-fonts.ts) or that needs
 * shaping. A key the form does not have is a FORM_FIELD_UNKNOWN warning, and is not drawn.
 */
import { ValidationError, type ValidationIssue } from '../shared/errors.js';
import type { DocumentWarning } from '../shared/document-warnings.js';
import {
  charactersNoFontDraws,
  coveringFontFile,
  describeCharacters,
  needsShaping,
} from '../finishing/requested/watermark-fonts.js';
import type { FormFieldSpec } from './form-fields.js';
import type { FormValue } from './form-filling.js';

/** What the data gives the form: the values to set, and a warning per key the form lacks. */
export interface CheckedFormData {
  values: FormValue[];
  warnings: DocumentWarning[];
}

/** Keys named in one warning's message at most; more are counted. */
const MAX_UNKNOWN_WARNINGS = 20;

/** The data as dotted leaf keys (`{customer: {name}}` → `customer.name`); arrays and scalars are leaves. */
function leaves(data: Record<string, unknown>, prefix = '', out = new Map<string, unknown>()): Map<string, unknown> {
  for (const [key, value] of Object.entries(data)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (value !== null && typeof value === 'object' && !Array.isArray(value))
      leaves(value as Record<string, unknown>, path, out);
    else out.set(path, value);
  }
  return out;
}

const isEmpty = (value: unknown) => value === undefined || value === null || value === '';

/** The text a text field shows for a value, or undefined when the value is no text. */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** The font file that draws `text` (line breaks are not drawn), or the problem with it. */
async function fontFor(text: string): Promise<{ font?: string; problem?: string }> {
  const drawn = text.replace(/[\r\n]/g, '');
  if (drawn === '') return {};
  if (needsShaping(drawn))
    return {
      problem:
        'the text has characters of a script drawn with shaping or right to left (Arabic, Hebrew, Indic, Thai…), which form fields cannot show yet',
    };
  const font = await coveringFontFile(drawn);
  if (font) return { font };
  const missing = await charactersNoFontDraws(drawn);
  return {
    problem:
      missing.length > 0
        ? `no font here draws ${describeCharacters(missing)}`
        : 'no single font here draws every character of this text together; a field is drawn in one font, so use characters of one script per field',
  };
}

/** The checked value of one field, or the message of its 422. */
async function checkValue(spec: FormFieldSpec, value: unknown): Promise<{ value: FormValue } | { msg: string }> {
  const name = spec.name;
  switch (spec.kind) {
    case 'checkbox':
      return typeof value === 'boolean' ? { value: { name, value } } : { msg: 'A checkbox takes true or false' };
    case 'radio':
    case 'dropdown':
    case 'listbox': {
      const options = spec.options ?? [];
      const many = spec.kind === 'listbox' && spec.multiSelect === true;
      const given = many && Array.isArray(value) ? value : [value];
      const list = `one of ${options.map((o) => JSON.stringify(o)).join(', ')}`;
      if (!given.every((v) => typeof v === 'string'))
        return { msg: many ? `Give a text or a list of texts, each ${list}` : `Give a text, ${list}` };
      const texts = given as string[];
      const free = spec.kind === 'dropdown' && spec.editable === true;
      const unknown = texts.filter((t) => !options.includes(t));
      if (unknown.length > 0 && !free)
        return { msg: `${JSON.stringify(unknown[0])} is not among the field's options; give ${list}` };
      if (spec.kind === 'radio') return { value: { name, value: texts[0]! } };
      const fonts = await Promise.all(texts.map(fontFor));
      const problem = fonts.find((f) => f.problem)?.problem;
      if (problem) return { msg: `This value cannot be drawn: ${problem}` };
      const font = fonts.find((f) => f.font)?.font;
      if (fonts.some((f) => f.font && f.font !== font))
        return { msg: 'The values need different fonts; a field is drawn in one font, so give values of one script' };
      const set = spec.kind === 'listbox' ? texts : texts[0]!;
      return { value: { name, value: set, ...(font ? { font } : {}) } };
    }
    case 'text': {
      const text = textOf(value);
      if (text === undefined) return { msg: spec.number ? 'Give a number' : 'Give a text or a number' };
      if (spec.number && !Number.isFinite(Number(text.trim())))
        return { msg: `The form formats this field as a number; ${JSON.stringify(text.slice(0, 50))} is not one` };
      if (spec.maxLength !== undefined && [...text].length > spec.maxLength)
        return { msg: `The form allows at most ${spec.maxLength} characters here; the value has ${[...text].length}` };
      if (!spec.multiline && /[\r\n]/.test(text))
        return { msg: 'This is a one-line field; give the value without line breaks' };
      const { font, problem } = await fontFor(text);
      if (problem) return { msg: `This value cannot be drawn: ${problem}` };
      return { value: { name, value: text, ...(font ? { font } : {}) } };
    }
  }
}

/** The data checked against the form's fields: the values to set and the warnings, or every problem as one 422. */
export async function checkFormData(
  specs: readonly FormFieldSpec[],
  data: Record<string, unknown>,
): Promise<CheckedFormData> {
  const given = leaves(data);
  const issues: ValidationIssue[] = [];
  const values: FormValue[] = [];
  for (const spec of specs) {
    const value = given.get(spec.name);
    const loc = ['body', 'data', spec.name];
    if (isEmpty(value)) {
      if (spec.required)
        issues.push({ loc, msg: `The form requires "${spec.name}"; give it a value`, type: 'missing.form_field' });
      continue;
    }
    const checked = await checkValue(spec, value);
    if ('msg' in checked) issues.push({ loc, msg: checked.msg, type: 'value_error.form_field' });
    else values.push(checked.value);
  }
  if (issues.length > 0) throw new ValidationError(issues);
  const names = new Set(specs.map((s) => s.name));
  const unknown = [...given.keys()].filter((key) => !names.has(key));
  const warnings: DocumentWarning[] = unknown.slice(0, MAX_UNKNOWN_WARNINGS).map((key) => ({
    code: 'FORM_FIELD_UNKNOWN',
    message: `The form has no field "${key}"; its value was not filled in (GET /v1/templates/{id}/fields lists the fields).`,
  }));
  if (unknown.length > MAX_UNKNOWN_WARNINGS)
    warnings.push({
      code: 'FORM_FIELD_UNKNOWN',
      message: `${unknown.length - MAX_UNKNOWN_WARNINGS} more keys of the data are not fields of the form.`,
    });
  return { values, warnings };
}
