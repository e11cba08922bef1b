/**
 * Image modifications: each one names a layer (template-layers.ts) and sets its text, image, colour,
 * background or visibility. They are applied in Node to the HTML the template produced (after its
 * variables were filled in the sandbox), by editing the parsed document — no script runs in the page,
 * and text goes in as a text node, so HTML and `{{ }}` in it stay literal. A name that no element
 * carries, an image that could not be loaded, or a field that does not fit the element (text on an
 * `<img>`) is a warning, never an error: the image is still rendered.
 */
import { defaultTreeAdapter, serialize, type DefaultTreeAdapterTypes } from 'parse5';
import { ValidationError, type ValidationIssue } from '../shared/errors.js';
import { isCssColor, normalizeCssColor } from './css-color.js';
import { attributeOf, BACKGROUND_LAYER, bodyOf, elementsOf, layerElements, parseDocument } from './template-layers.js';

type Element = DefaultTreeAdapterTypes.Element;

/** One modification, as `POST /v1/image/create` takes it. */
export interface LayerModification {
  name: string;
  text?: string | null;
  image_url?: string | null;
  color?: string | null;
  background?: string | null;
  hidden?: boolean | null;
}

/** An `image_url` after loading: the image as a data: URI, or why it could not be had. */
export type LoadedImage = { dataUri: string } | { error: string };

/** Elements whose content the serializer writes raw (or that hold none): text cannot go in safely. */
const NO_TEXT_ELEMENTS = new Set([
  'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr',
  'script', 'style', 'xmp', 'iframe', 'noembed', 'noframes', 'noscript', 'plaintext', 'textarea', 'title', 'template',
]);

/** Refuses (422, before any charge) colours that are not plain CSS colours. */
export function checkModifications(modifications: readonly LayerModification[]): void {
  const issues: ValidationIssue[] = [];
  modifications.forEach((modification, index) => {
    for (const field of ['color', 'background'] as const) {
      const value = modification[field];
      if (value != null && !isCssColor(value)) {
        issues.push({
          loc: ['body', 'modifications', index, field],
          msg: 'should be a CSS colour: #rgb, #rrggbb, #rrggbbaa, a colour name such as "navy", or rgb()/hsl()/… with numbers only',
          type: 'value_error',
        });
      }
    }
  });
  if (issues.length > 0) throw new ValidationError(issues);
}

/** The distinct `image_url`s the modifications need loaded. */
export function imageUrlsOf(modifications: readonly LayerModification[]): string[] {
  return [...new Set(modifications.map((m) => m.image_url).filter((url): url is string => typeof url === 'string' && url !== ''))];
}

/**
 * Applies the modifications to a rendered template's HTML. Without modifications the HTML is returned
 * as it is (not re-serialized).
 */
export function applyModifications(html: string, modifications: readonly LayerModification[], images: ReadonlyMap<string, LoadedImage>): { html: string; warnings: string[] } {
  if (modifications.length === 0) return { html, warnings: [] };
  const document = parseDocument(html);
  const byName = layerElements(document);
  const warnings: string[] = [];
  for (const modification of modifications) {
    const targets = byName.get(modification.name) ?? elementsWithId(document, modification.name) ?? (modification.name === BACKGROUND_LAYER ? [bodyOf(document)!] : []);
    if (targets.length === 0) {
      warnings.push(`Layer "${modification.name}" was not found in the template; its modification was skipped.`);
      continue;
    }
    const image = modification.image_url ? images.get(modification.image_url) : undefined;
    if (image && 'error' in image) warnings.push(`Layer "${modification.name}": image_url was not loaded (${image.error}); the layer keeps its image.`);
    for (const element of targets) modify(element, modification, image && 'dataUri' in image ? image.dataUri : undefined, warnings);
  }
  return { html: serialize(document), warnings };
}

function elementsWithId(document: DefaultTreeAdapterTypes.Document, id: string): Element[] | undefined {
  const found = [...elementsOf(document)].filter((element) => attributeOf(element, 'id') === id);
  return found.length > 0 ? found : undefined;
}

function modify(element: Element, modification: LayerModification, dataUri: string | undefined, warnings: string[]): void {
  const styles: string[] = [];
  // The background layer is the page's backdrop: replacing its text or hiding it would wipe the whole image.
  const isBackground = modification.name === BACKGROUND_LAYER;
  for (const field of ['text', 'hidden'] as const) {
    if (isBackground && modification[field] != null) warnings.push(`Layer "${BACKGROUND_LAYER}": ${field} does not apply to the background layer (background and image_url do).`);
  }
  if (modification.text != null && !isBackground) {
    if (NO_TEXT_ELEMENTS.has(element.tagName)) warnings.push(`Layer "${modification.name}" is a <${element.tagName}>: text does not apply to it.`);
    else replaceText(element, modification.text);
  }
  if (dataUri) {
    if (element.tagName === 'img') setImageSource(element, dataUri);
    else styles.push(`background-image: url("${dataUri}")`);
  }
  if (modification.color != null) styles.push(`color: ${normalizeCssColor(modification.color)}`);
  if (modification.background != null) styles.push(`background-color: ${normalizeCssColor(modification.background)}`);
  if (modification.hidden === true && !isBackground) styles.push('display: none');
  if (modification.hidden === false && !isBackground) show(element);
  if (styles.length > 0) appendStyle(element, styles);
}

function replaceText(element: Element, text: string): void {
  for (const child of element.childNodes) child.parentNode = null;
  element.childNodes = [];
  if (text !== '') defaultTreeAdapter.insertText(element, text);
}

/** Sets an `<img>`'s source; a `srcset` (or a `<picture>`'s `<source>`) would otherwise win. */
function setImageSource(element: Element, dataUri: string): void {
  setAttribute(element, 'src', dataUri);
  element.attrs = element.attrs.filter((a) => a.name !== 'srcset' && a.name !== 'sizes');
  const parent = element.parentNode;
  if (parent && 'tagName' in parent && parent.tagName === 'picture') {
    parent.childNodes = parent.childNodes.filter((child) => !('tagName' in child) || child.tagName !== 'source');
  }
}

/** `hidden: false`: removes the `hidden` attribute and an inline `display: none` (a stylesheet rule stays). */
function show(element: Element): void {
  element.attrs = element.attrs.filter((a) => a.name !== 'hidden');
  const style = attributeOf(element, 'style');
  if (style !== undefined) setAttribute(element, 'style', style.replace(/display\s*:\s*none\s*(?:!\s*important\s*)?;?/gi, ''));
}

/** Inline declarations marked important, so they win over the template's own stylesheet rules. */
function appendStyle(element: Element, declarations: string[]): void {
  const current = (attributeOf(element, 'style') ?? '').trim();
  const added = declarations.map((d) => `${d} !important`).join('; ');
  setAttribute(element, 'style', current === '' ? added : `${current.replace(/;\s*$/, '')}; ${added}`);
}

function setAttribute(element: Element, name: string, value: string): void {
  const attribute = element.attrs.find((a) => a.name === name);
  if (attribute) attribute.value = value;
  else element.attrs.push({ name, value });
}
