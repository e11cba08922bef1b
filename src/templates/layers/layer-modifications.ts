/**
 * Image modifications: each one names a layer (template-layers.ts) and sets its text, image, colour,
 * background or visibility. Here, in Node, they are only checked (before any charge) and turned into
 * the page's edits; they are applied in Chromium, to the document the template produced, right before
 * the picture is taken (browser/pages/layer-edits.ts): no parse of the template's output on the
 * service's thread. Text goes in as text, so HTML and `{{ }}` in it stay literal. A name that no
 * element carries, an image that could not be loaded, or a field that does not fit the element (text
 * on an `<img>`) is a warning, never an error: the image is still rendered.
 */
import type { LayerEdit, LayerEdits } from '../../rendering/image-renderer.js';
import { ValidationError, type ValidationIssue } from '../../shared/errors.js';
import { isCssColor, normalizeCssColor } from './css-color.js';
import { MAX_TEMPLATE_LAYERS } from './template-layers.js';

/** The most modifications one request may carry (TemplateFox's `maxItems` on `modifications`). */
export const MAX_MODIFICATIONS = 100;

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
  return [
    ...new Set(
      modifications.map((m) => m.image_url).filter((url): url is string => typeof url === 'string' && url !== ''),
    ),
  ];
}

/**
 * The page's edits for `modifications` (checked), with the images loaded for them: each distinct image
 * goes to the page once, and one that could not be loaded becomes that edit's warning.
 */
export function layerEdits(
  modifications: readonly LayerModification[],
  images: ReadonlyMap<string, LoadedImage>,
): LayerEdits {
  const uris: string[] = [];
  const indexOf = new Map<string, number>();
  const edits = modifications.map((modification): LayerEdit => {
    const edit: LayerEdit = { name: modification.name };
    if (modification.text != null) edit.text = modification.text;
    if (modification.color != null) edit.color = normalizeCssColor(modification.color);
    if (modification.background != null) edit.background = normalizeCssColor(modification.background);
    if (modification.hidden != null) edit.hidden = modification.hidden;
    const url = modification.image_url;
    const image = url ? images.get(url) : undefined;
    if (image && 'error' in image) edit.imageError = image.error;
    else if (url && image) {
      let index = indexOf.get(url);
      if (index === undefined) {
        index = uris.push(image.dataUri) - 1;
        indexOf.set(url, index);
      }
      edit.image = index;
    }
    return edit;
  });
  return { edits, images: uris, maxLayers: MAX_TEMPLATE_LAYERS };
}
