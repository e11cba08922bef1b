/**
 * Required fields (issue 13): a template's `fields` marked `required` need a value in the data — not
 * missing, null or '' at the field's dotted key, read the way the template reads the data
 * (data-binding.ts: `customer.name` is `{"customer": {"name": …}}` or `{"customer.name": …}`).
 * Checked before any charge, for every door that renders a template (pdf/create, create-async,
 * image/create, preview): a strict template refuses the request with 422 naming every missing key
 * (`loc: ['body', 'data', key]`), and nothing is charged, stored or queued; any other template is
 * generated, with a MISSING_REQUIRED_FIELD warning for each key.
 */
import type { DocumentWarning } from '../shared/document-warnings.js';
import { ValidationError } from '../shared/errors.js';
import type { TemplateContent } from '../templates/template-content.js';
import { expandDottedKeys, valueAt } from './data-binding.js';

/**
 * The keys of the template's required fields that `data` (as the caller sent it) has no value for.
 * `provided`: top-level names the service itself puts beside the data (`einvoice`), never missing.
 */
export function missingRequiredFields(
  fields: TemplateContent['fields'],
  data: unknown,
  provided: readonly string[] = [],
): string[] {
  const required = fields.filter((f) => f.required && !provided.includes(f.key.split('.')[0]!));
  if (required.length === 0) return [];
  const bound = expandDottedKeys(data);
  return required
    .filter((f) => {
      const value = valueAt(bound, f.key);
      return value === undefined || value === null || value === '';
    })
    .map((f) => f.key);
}

/**
 * The check itself: a strict template with a required field missing throws a ValidationError (422)
 * naming each; otherwise the answer's warnings, one MISSING_REQUIRED_FIELD per missing key.
 */
export function checkRequiredFields(
  template: Pick<TemplateContent, 'fields' | 'strict'>,
  data: unknown,
  provided: readonly string[] = [],
): DocumentWarning[] {
  const missing = missingRequiredFields(template.fields, data, provided);
  if (missing.length === 0) return [];
  if (template.strict) {
    throw new ValidationError(
      missing.map((key) => ({ loc: ['body', 'data', key], msg: 'Field required by the template', type: 'missing' })),
    );
  }
  return missing.map((key) => ({
    code: 'MISSING_REQUIRED_FIELD',
    message: `"${key}" is a required field of the template and the data has no value for it (missing, null or ""); the document was made without it`,
  }));
}
