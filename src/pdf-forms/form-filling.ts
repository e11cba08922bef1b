/**
 * Fills a form template's PDF on a form thread (form-worker.ts): the values checked before the charge
 * (form-values.ts), each text set in the font the main thread chose for it (the watermark's rule:
 * finishing/requested/watermark-fonts.ts), embedded, with appearances generated so every viewer shows
 * the values; the fields locked (ReadOnly) with `readOnly`. Flattening is qpdf's (form-files.ts), after
 * this: @libpdf/core's own flatten left a page without content of its own blank (0.4.2).
 */
import { readFile } from 'node:fs/promises';
import {
  PDF,
  PdfNumber,
  type CheckboxField,
  type DropdownField,
  type EmbeddedFont,
  type FormField,
  type ListBoxField,
  type RadioField,
  type TextField,
} from '@libpdf/core';
import { radioChoices } from './form-reading.js';

/** One field's value, checked: text for text fields, dropdowns and radio groups, a boolean for a checkbox, texts for a list box. */
export interface FormValue {
  name: string;
  value: string | boolean | string[];
  /** The font file that draws the text (text fields and dropdowns); absent for boxes and buttons. */
  font?: string;
}

export interface FillOptions {
  /** Draw the values into the pages and drop the form (by qpdf, after the fill: form-files.ts). */
  flatten: boolean;
  /** Keep the fields, each marked ReadOnly (only without flatten). */
  readOnly: boolean;
}

/** ReadOnly, the first bit of a field's /Ff. */
const FF_READ_ONLY = 1;

/** Font files read once per thread: the fonts are the service's own, a handful. */
const fontFiles = new Map<string, Promise<Uint8Array>>();

function fontFile(path: string): Promise<Uint8Array> {
  let bytes = fontFiles.get(path);
  if (!bytes) {
    bytes = readFile(path);
    fontFiles.set(path, bytes);
  }
  return bytes;
}

/**
 * The font embedded once per document. @libpdf/core picks a field's font only when it encodes the whole
 * value, line breaks included, which no font has a glyph for: a multi-line value would fall back to the
 * form's own (Latin-only) font. Line breaks are never drawn, so they are not asked about.
 */
async function embedded(pdf: PDF, path: string, cache: Map<string, EmbeddedFont>): Promise<EmbeddedFont> {
  let font = cache.get(path);
  if (!font) {
    font = pdf.embedFont(await fontFile(path));
    const encodes = font.canEncode.bind(font);
    font.canEncode = (text: string) => encodes(text.replace(/[\r\n]/g, ''));
    cache.set(path, font);
  }
  return font;
}

function setValue(field: FormField, value: FormValue['value']): void {
  switch (field.type) {
    case 'checkbox': {
      const box = field as CheckboxField;
      if (typeof value === 'string') return box.setValue(value);
      return value ? box.check() : box.uncheck();
    }
    case 'radio': {
      const radio = field as RadioField;
      const choice = radioChoices(radio).find((c) => c.option === value);
      if (!choice) throw new Error(`no option ${JSON.stringify(value)} in radio group ${field.name}`);
      return radio.setValue(choice.state);
    }
    case 'listbox':
      return (field as ListBoxField).setValue(Array.isArray(value) ? value : [String(value)]);
    case 'dropdown':
      return (field as DropdownField).setValue(String(value));
    case 'text':
      return (field as TextField).setValue(String(value));
    default:
      throw new Error(`field ${field.name} (${field.type}) takes no value`);
  }
}

/** The filled PDF. */
export async function fillForm(
  bytes: Uint8Array,
  values: readonly FormValue[],
  options: FillOptions,
): Promise<Uint8Array> {
  const pdf = await PDF.load(bytes);
  const form = pdf.getForm();
  if (!form) throw new Error('the PDF has no form');
  const fonts = new Map<string, EmbeddedFont>();
  for (const { name, value, font } of values) {
    const field = form.getField(name);
    if (!field) throw new Error(`the form has no field ${name}`);
    if (font && 'setFont' in field)
      (field as { setFont(f: EmbeddedFont): void }).setFont(await embedded(pdf, font, fonts));
    setValue(field, value);
  }
  if (options.readOnly)
    for (const field of form.getFields()) field.acroField().set('Ff', PdfNumber.of(field.flags | FF_READ_ONLY));
  // Flattened, nobody types into the fields again: the fonts need only the glyphs drawn. @libpdf/core keeps
  // a font a field uses whole (for later typing), so each is told it is not a field's font any more.
  if (options.flatten)
    for (const font of fonts.values())
      if ('_usedInForm' in font) (font as unknown as { _usedInForm: boolean })._usedInForm = false;
  // Every filled field has its appearance now: a viewer (or qpdf's flattening) must not draw its own over it.
  pdf
    .getCatalog()
    .getDict('AcroForm', (ref) => pdf.getObject(ref))
    ?.delete('NeedAppearances');
  // Flattened, the PDF goes on to qpdf, which writes its streams compressed (zlib, in C): compressing them
  // here first (pako, in JS: most of a one-page fill's time, the font embedded whole) would be work thrown away.
  return pdf.save({ subsetFonts: true, compressStreams: !options.flatten });
}
