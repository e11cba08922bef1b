/**
 * What a fillable PDF form template knows of its form (issue 54; docs/pdf-forms.md): one FormFieldSpec
 * per terminal AcroForm field, read from the PDF when it is uploaded (form-reading.ts), and the
 * TemplateFox field definitions `GET /v1/templates/{id}/fields` answers with, made from them. The form
 * is the source of keys, types, options and the required flag; labels and help texts may be edited
 * like any template's fields (PUT /v1/templates/{id} with `fields`), and are kept by key.
 */
import type { FieldDefinition, FieldInput } from '../templates/field-inference.js';
import { ValidationError, type ValidationIssue } from '../shared/errors.js';

/** The kinds of terminal field a form template fills (push buttons and signature fields are not filled). */
export type FormFieldKind = 'text' | 'checkbox' | 'radio' | 'dropdown' | 'listbox';

/** One terminal field of the form, as read from the PDF. */
export interface FormFieldSpec {
  /** The fully qualified name (`customer.name`): the key in `data`. */
  name: string;
  kind: FormFieldKind;
  /** The field's tooltip (/TU), when it has one. */
  tooltip: string | null;
  /** The form's Required flag (Ff bit 2). */
  required: boolean;
  /** Radio groups, dropdowns and list boxes: the values a caller may give. */
  options?: string[];
  /** A dropdown that accepts any text as well (Ff Edit). */
  editable?: boolean;
  /** A list box that accepts several values (Ff MultiSelect). */
  multiSelect?: boolean;
  /** Text fields: several lines (Ff Multiline). */
  multiline?: boolean;
  /** Text fields: the form formats the value as a number (an AFNumber_Format action). */
  number?: boolean;
  /** Text fields: at most this many characters (/MaxLen). */
  maxLength?: number;
}

/** What is kept of a form template's PDF beside its stored bytes (templates.form, JSON). */
export interface FormFacts {
  pages: number;
  bytes: number;
  sha256: string;
  fields: FormFieldSpec[];
}

/** A form template's stored PDF and what was read of it (null on every other template). */
export interface FormTemplateFile extends FormFacts {
  /** The blob store key of the PDF (fresh per upload; versions keep the key they were published with). */
  storageKey: string;
}

/** The most fields a form template may have: as many as any template may be given (`fields`, maxItems 500). */
export const MAX_FORM_FIELDS = 500;

/** The most options a choice field lists in its help text; the `options` list has them all. */
const OPTIONS_IN_HELP = 20;

function helpTextOf(spec: FormFieldSpec): string | null {
  const options = spec.options ?? [];
  if (options.length === 0) return spec.number ? 'A number' : null;
  const named = options.slice(0, OPTIONS_IN_HELP).map((o) => JSON.stringify(o));
  const more = options.length > OPTIONS_IN_HELP ? ` and ${options.length - OPTIONS_IN_HELP} more` : '';
  const one = spec.kind === 'listbox' && spec.multiSelect ? 'One or more of' : 'One of';
  return `${one} ${named.join(', ')}${more}`;
}

/** The field definition the form alone gives a spec: its name as key, its tooltip (or name) as label. */
function inferred(spec: FormFieldSpec): FieldDefinition {
  const listOfMany = spec.kind === 'listbox' && spec.multiSelect === true;
  return {
    key: spec.name,
    label: (spec.tooltip ?? '').trim().slice(0, 200) || spec.name,
    type: spec.kind === 'checkbox' ? 'boolean' : spec.number ? 'number' : listOfMany ? 'array' : 'string',
    required: spec.required,
    helpText: helpTextOf(spec),
    spec: null,
    ...(spec.options ? { options: [...spec.options] } : {}),
  };
}

/**
 * The `/fields` definitions of a form: one per spec, in the form's order; `edited` (fields saved
 * before, or given now) keeps its label and help text for each key the form still has.
 */
export function formFieldDefinitions(specs: readonly FormFieldSpec[], edited?: readonly FieldDefinition[]) {
  const byKey = new Map((edited ?? []).map((f) => [f.key, f]));
  return specs.map((spec) => {
    const field = inferred(spec);
    const own = byKey.get(spec.name);
    return own ? { ...field, label: own.label, helpText: own.helpText } : field;
  });
}

/**
 * Fields given for a form template: only its own keys (a 422 at `["body","fields",i,"key"]` names one the
 * form lacks), and only labels and help texts change; keys, types, options and required come from the form.
 */
export function editedFormFields(specs: readonly FormFieldSpec[], given: readonly FieldInput[]): FieldDefinition[] {
  const names = new Set(specs.map((s) => s.name));
  const issues: ValidationIssue[] = [];
  given.forEach((field, i) => {
    if (!names.has(field.key))
      issues.push({
        loc: ['body', 'fields', i, 'key'],
        msg: `The form has no field "${field.key}"; a form template's keys are its fields' names (GET /v1/templates/{id}/fields lists them)`,
        type: 'value_error.form_field',
      });
  });
  if (issues.length > 0) throw new ValidationError(issues);
  const edits = given.map((f) => ({
    key: f.key,
    label: f.label,
    type: 'string' as const,
    required: false,
    helpText: f.helpText ?? null,
    spec: null,
  }));
  return formFieldDefinitions(specs, edits);
}
