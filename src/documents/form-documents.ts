/**
 * Documents of a `pdf_form` template (issue 54; docs/pdf-forms.md): the customer's fillable PDF filled
 * from `data` instead of HTML printed by Chromium. `checkFormDocument` runs in prepare, before the
 * charge: what a form document cannot be combined with, and the data against the form's fields
 * (pdf-forms/form-values.ts: a 422 naming the field). `fillFormDocument` runs in produce: the data
 * checked again (a job runs the template as it is then), the PDF filled on a form thread; the result
 * then goes through the same finishing as a printed PDF (watermark, metadata, sign, protect).
 */
import { ValidationError } from '../shared/errors.js';
import type { DocumentWarning } from '../shared/document-warnings.js';
import type { Template } from '../templates/templates.js';
import type { FormFiles } from '../pdf-forms/form-files.js';
import { checkFormData } from '../pdf-forms/form-values.js';
import { fillFormOffThread } from '../pdf-forms/form-thread.js';
import type { FillOptions } from '../pdf-forms/form-filling.js';

/** `form` on create: flattened unless `flatten: false`; `read_only` keeps the fields, locked (and is not flattened). */
export interface FormOptions {
  flatten?: boolean | null;
  readOnly?: boolean | null;
}

/** What of a generation's options a form document depends on (documents.ts GenerationOptions). */
export interface FormDocumentOptions {
  form?: FormOptions | null;
  image?: unknown;
  einvoice?: unknown;
  pdfUa?: boolean | null;
  tagged?: boolean | null;
  pdfVariant?: string | null;
}

const refuse = (field: string[], msg: string): never => {
  throw new ValidationError([{ loc: ['body', ...field], msg, type: 'value_error.pdf_form' }]);
};

/** How the form is left: flattened by default; fillable with `flatten: false` or `read_only: true`. */
export function fillOptionsOf(form: FormOptions | null | undefined): FillOptions {
  const readOnly = form?.readOnly === true;
  return { flatten: form?.flatten ?? !readOnly, readOnly };
}

/** Refuses (422) what a form document cannot be, before the charge; `form` on another template too. */
function checkCombination(template: Template, options: FormDocumentOptions): void {
  if (template.kind !== 'pdf_form') {
    if (options.form != null)
      refuse(['form'], 'form (flatten, read_only) applies to pdf_form templates only; leave it out for this template');
    return;
  }
  if (options.image)
    refuse(
      ['template_id'],
      'A pdf_form template makes a PDF; images of a filled form are not made yet. Use POST /v1/pdf/create',
    );
  if (options.einvoice)
    refuse(['einvoice'], 'An e-invoice cannot be made from a pdf_form template; use an HTML template');
  if (options.pdfUa)
    refuse(
      ['pdf_ua'],
      "A filled form cannot be made PDF/UA: its accessibility is the form's own (its tags, if any). Leave pdf_ua out",
    );
  if (options.tagged === true)
    refuse(['tagged'], 'A filled form is not printed, so it is not tagged by the service; leave tagged out');
  if (options.pdfVariant) refuse(['pdf_variant'], 'PDF/A of a filled form is not made yet; leave pdf_variant out');
  if (options.form?.readOnly === true && options.form.flatten === true)
    refuse(['form', 'read_only'], 'read_only keeps the fields (locked), flatten removes them; give one of the two');
}

/** The checks of prepare: the combination, and the data against the form (the warnings are produce's to give). */
export async function checkFormDocument(
  template: Template,
  options: FormDocumentOptions,
  data: Record<string, unknown>,
): Promise<void> {
  checkCombination(template, options);
  if (template.kind === 'pdf_form' && template.form) await checkFormData(template.form.fields, data);
}

/**
 * The filled PDF of a form template, and a warning per data key the form lacks. `preview` (the studio's
 * free preview, documents.ts): free work in the form pool, and a required field without a value is left
 * blank instead of refused (the preview's caller gives it as a warning, as for an HTML template).
 */
export async function fillFormDocument(
  work: { accountId: string; template: Template; data: Record<string, unknown>; options: FormDocumentOptions },
  files: Pick<FormFiles, 'read' | 'flatten'> | undefined,
  mode: { preview?: boolean } = {},
): Promise<{ pdf: Buffer; warnings: DocumentWarning[] }> {
  const { template, accountId } = work;
  const preview = mode.preview === true;
  checkCombination(template, work.options);
  if (!template.form || !files) throw new Error('a pdf_form template without its form, or form files not set up');
  const specs = preview ? template.form.fields.map((spec) => ({ ...spec, required: false })) : template.form.fields;
  const checked = await checkFormData(specs, work.data);
  const how = fillOptionsOf(work.options.form);
  const filled = await fillFormOffThread(await files.read(template.form), {
    values: checked.values,
    options: how,
    ticket: { accountId, kind: preview ? 'free' : 'paid' },
  });
  return { pdf: how.flatten ? await files.flatten(filled, accountId) : filled, warnings: checked.warnings };
}
