/** What a template says, as stored in a row of `templates` or of `template_versions` (both keep the same columns). */
import type { AssetPin } from '../assets/asset-revisions.js';
import type { TemplateContentColumns } from '../db/schema.js';
import type { PageSetup } from '../rendering/pdf-options.js';
import type { FieldDefinition } from './field-inference.js';
import type { FormFacts, FormTemplateFile } from '../pdf-forms/form-fields.js';
import type { Canvas, TemplateKind } from './template-kind.js';

/** The stored columns of a template's content (the same in `templates` and `template_versions`). */
export type TemplateContentRow = TemplateContentColumns;

/** A template's content with its JSON columns parsed. */
export interface TemplateContent {
  name: string;
  html: string;
  css: string | null;
  fields: FieldDefinition[];
  fieldsInferred: boolean;
  sampleData: Record<string, unknown> | null;
  page: PageSetup | null;
  /** `pdf` (paper, page setup), `image` (a canvas rendered by image/create) or `pdf_form` (a fillable PDF filled from data). */
  kind: TemplateKind;
  /** The image canvas in CSS pixels; null for a PDF template. */
  canvas: Canvas | null;
  /**
   * Strict mode (docs/templates.md "Strict mode and warnings"): an undefined variable, a text where a
   * number or date belongs, or a required field the data lacks is an error (422, nothing charged)
   * instead of a warning.
   */
  strict: boolean;
  /** A `pdf_form` template's PDF and its fields (docs/pdf-forms.md); null for every other kind. */
  form: FormTemplateFile | null;
}

/** A template as the owner sees it. */
export interface Template extends TemplateContent {
  id: string;
  accountId: string;
  createdAt: number;
  updatedAt: number;
  /**
   * Set when this is a version's snapshot rather than the draft; `assets`: the asset revisions it
   * was published with (docs/assets.md#revisions), which its renders print.
   */
  version?: { number: number; tag: string; assets?: AssetPin } | null;
}

/** Parses the JSON columns of a draft or a version. */
export function templateContentOf(row: TemplateContentRow): TemplateContent {
  return {
    name: row.name,
    html: row.html,
    css: row.css,
    fields: JSON.parse(row.fields) as FieldDefinition[],
    fieldsInferred: row.fields_inferred === 1,
    sampleData: row.sample_data === null ? null : (JSON.parse(row.sample_data) as Record<string, unknown>),
    page: row.page === null ? null : (JSON.parse(row.page) as PageSetup),
    kind: row.kind === 'image' || row.kind === 'pdf_form' ? row.kind : 'pdf',
    canvas: row.canvas === null ? null : (JSON.parse(row.canvas) as Canvas),
    strict: Number(row.strict) === 1,
    form:
      row.form_key === null || row.form === null
        ? null
        : { ...(JSON.parse(row.form) as FormFacts), storageKey: row.form_key },
  };
}

/** The form columns of a draft or a version for `form` (both null for any template but a pdf_form one). */
export function formColumns(form: FormTemplateFile | null): { form_key: string | null; form: string | null } {
  if (!form) return { form_key: null, form: null };
  const { storageKey, ...facts } = form;
  return { form_key: storageKey, form: JSON.stringify(facts) };
}
