/**
 * Reads a fillable PDF's AcroForm into FormFieldSpecs (form-fields.ts), on a form thread
 * (form-worker.ts): the PDF has been checked by qpdf and written without object streams first
 * (form-files.ts), so @libpdf/core never inflates an unbounded object stream. What it refuses, and why:
 * no AcroForm; an XFA form whose AcroForm has no usable fields (only an XFA viewer fills it); a form of
 * signature fields and push buttons only (nothing to fill); more than MAX_FORM_FIELDS fields.
 *
 * Fields the form marks read-only are not listed: their values are the form's, not the caller's.
 */
import {
  PDF,
  PdfDict,
  PdfStream,
  PdfString,
  type CheckboxField,
  type DropdownField,
  type FormField,
  type ListBoxField,
  type PdfObject,
  type RadioField,
  type TextField,
} from '@libpdf/core';
import { MAX_FORM_FIELDS, type FormFieldSpec } from './form-fields.js';

/** What reading a form found: its fields and page count, or why it is not a form to fill. */
export type FormReading =
  | { kind: 'form'; pages: number; fields: FormFieldSpec[] }
  | {
      kind: 'refused';
      reason: 'encrypted' | 'no_form' | 'xfa_only' | 'signature_only' | 'no_fields' | 'too_many_fields';
    };

/** The field types the form's /Ff bits name (PDF 32000-1 12.7.4). */
const FF_EDIT = 1 << 18;
const FF_MULTI_SELECT = 1 << 21;

/** A radio group's values and the appearance state each selects: the /Opt export values when there is one per state. */
export function radioChoices(field: RadioField): { option: string; state: string }[] {
  const states = field.getOptions();
  const exported = field.getExportValues();
  if (exported.length === states.length && new Set(exported).size === exported.length)
    return states.map((state, i) => ({ option: exported[i]!, state }));
  return states.map((state) => ({ option: state, state }));
}

/** The JavaScript of an action, as text (a string or a stream). */
function scriptOf(action: PdfObject | undefined, resolve: (o: PdfObject | undefined) => PdfObject | undefined): string {
  const dict = resolve(action);
  if (!(dict instanceof PdfDict)) return '';
  const js = resolve(dict.get('JS'));
  if (js instanceof PdfString) return js.asString();
  if (js instanceof PdfStream) return new TextDecoder('latin1').decode(js.getDecodedData().subarray(0, 4096));
  return '';
}

/** Whether the form formats the field as a number: its format action calls AFNumber_Format (Acrobat's "Number" format). */
function formatsAsNumber(field: FormField, pdf: PDF): boolean {
  const resolve = (o: PdfObject | undefined): PdfObject | undefined =>
    o !== undefined && o.type === 'ref' ? (pdf.getObject(o as never) ?? undefined) : o;
  const actions = resolve(field.acroField().get('AA'));
  if (!(actions instanceof PdfDict)) return false;
  return /AFNumber_Format\s*\(/.test(scriptOf(actions.get('F'), resolve));
}

function specOf(field: FormField, pdf: PDF): FormFieldSpec | undefined {
  const base = { name: field.name, tooltip: field.alternateName, required: field.isRequired() };
  switch (field.type) {
    case 'text': {
      const text = field as TextField;
      return {
        ...base,
        kind: 'text',
        multiline: text.isMultiline,
        ...(text.maxLength > 0 ? { maxLength: text.maxLength } : {}),
        ...(formatsAsNumber(field, pdf) ? { number: true } : {}),
      };
    }
    case 'checkbox': {
      const box = field as CheckboxField;
      // A group of boxes with distinct on-values is one choice among them, as a radio group is.
      if (box.isGroup) return { ...base, kind: 'radio', options: box.getOnValues() };
      return { ...base, kind: 'checkbox' };
    }
    case 'radio':
      return { ...base, kind: 'radio', options: radioChoices(field as RadioField).map((c) => c.option) };
    case 'dropdown': {
      const drop = field as DropdownField;
      return {
        ...base,
        kind: 'dropdown',
        options: drop.getOptions().map((o) => o.value),
        ...((field.flags & FF_EDIT) !== 0 ? { editable: true } : {}),
      };
    }
    case 'listbox': {
      const list = field as ListBoxField;
      return {
        ...base,
        kind: 'listbox',
        options: list.getOptions().map((o) => o.value),
        ...((field.flags & FF_MULTI_SELECT) !== 0 ? { multiSelect: true } : {}),
      };
    }
    default:
      // Signature fields and push buttons hold no value to fill.
      return undefined;
  }
}

/** Reads the form of `pdf` (written without object streams). */
export async function readForm(bytes: Uint8Array): Promise<FormReading> {
  const pdf = await PDF.load(bytes);
  if (pdf.isEncrypted) return { kind: 'refused', reason: 'encrypted' };
  const pages = pdf.getPageCount();
  const acroForm = pdf.getCatalog().get('AcroForm', (ref) => pdf.getObject(ref));
  if (!(acroForm instanceof PdfDict)) return { kind: 'refused', reason: 'no_form' };
  const form = pdf.getForm();
  const terminal = form ? form.getFields() : [];
  if (terminal.length > MAX_FORM_FIELDS) return { kind: 'refused', reason: 'too_many_fields' };
  const fields = terminal.filter((f) => !f.isReadOnly()).flatMap((f) => specOf(f, pdf) ?? []);
  if (fields.length > 0) return { kind: 'form', pages, fields };
  if (acroForm.has('XFA')) return { kind: 'refused', reason: 'xfa_only' };
  if (terminal.some((f) => f.type === 'signature')) return { kind: 'refused', reason: 'signature_only' };
  return { kind: 'refused', reason: 'no_fields' };
}
