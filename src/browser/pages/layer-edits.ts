/**
 * Image modifications applied in the page (`POST /v1/image/create`'s `modifications`, decided in
 * templates/layers/layer-modifications.ts): each edit names a layer — an element with `data-layer` (or
 * `data-layer-name`), else the elements with that `id`, else, for `background`, the `<body>` — and sets
 * its text, image, colours or visibility on the live document, just before the picture is taken.
 *
 * Why in the page: Chromium has already parsed the document into the DOM the edits address, and its
 * selectors and DOM calls do in milliseconds what a second parse of the whole HTML in Node cost in
 * seconds of the service's one thread (issue 37; docs/performance-log/2026-11-28-issue-37.md).
 * The work runs in an isolated world of the capture page (the document's own scripts cannot see or
 * change its functions; on a page without scripts they are off anyway), under the render deadline
 * and the renderer memory watch, like the rest of the render.
 *
 * An image goes in once however many elements use it: an `<img>`'s `src` is one shared string, and
 * a background image is one rule of a style sheet the page adds, in a cascade layer declared before
 * any of the template's, whose `!important` wins over every `!important` rule of the template (an
 * inline `background-image` of the element is removed for it). Then each new image is decoded before
 * the capture, so the picture never shows a half-loaded image.
 */
import type { CDPSession } from 'puppeteer-core';
import { isolatedWorld, pageFunction } from '../cdp-helpers.js';

/** One layer's changes, as the page applies them (colours already checked and normalised). */
export interface LayerEdit {
  name: string;
  /** Literal text for the element's content. */
  text?: string;
  /** The image to set: an index into `LayerEdits.images`. */
  image?: number;
  /** Why the modification's image could not be had: a warning, the layer keeps its image. */
  imageError?: string;
  color?: string;
  background?: string;
  hidden?: boolean;
}

/** Everything one image's modifications change. */
export interface LayerEdits {
  edits: LayerEdit[];
  /** The distinct images the edits set, as `data:` URIs. */
  images: string[];
  /** The most layer elements the document may have for the edits to be applied. */
  maxLayers: number;
}

/** What the page answers: the warnings, or the layer count past `maxLayers` (nothing was changed then). */
export type LayerEditsOutcome = { warnings: string[] } | { tooManyLayers: number };

const WORLD_NAME = 'pressroom-layer-edits';

/** Applies `edits` to the document of `frameId` and waits for its new images to be decoded. */
export async function applyLayerEdits(
  session: CDPSession,
  frameId: string,
  edits: LayerEdits,
  signal: AbortSignal,
): Promise<LayerEditsOutcome> {
  const call = await isolatedWorld(session, { frameId, worldName: WORLD_NAME }, signal);
  const { value, error } = await call(BROWSER_FUNCTION, edits, { awaitPromise: true });
  if (error !== undefined) throw new Error(`applying the layer modifications failed: ${error}`);
  return value as LayerEditsOutcome;
}

/** The little of the DOM `editLayers` uses (this project compiles without the DOM library). */
interface BrowserStyle {
  setProperty(name: string, value: string, priority: string): void;
  removeProperty(name: string): string;
  getPropertyValue(name: string): string;
}
interface BrowserElement {
  readonly localName: string;
  readonly parentElement: BrowserElement | null;
  readonly children: ArrayLike<BrowserElement>;
  readonly style: BrowserStyle;
  textContent: string | null;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  removeAttribute(name: string): void;
  remove(): void;
  prepend(node: BrowserElement): void;
  decode?(): Promise<void>;
}
interface BrowserImage {
  src: string;
  decode(): Promise<void>;
}
interface BrowserGlobals {
  Image: new () => BrowserImage;
  CSS: { escape(value: string): string };
  document: {
    readonly body: BrowserElement | null;
    readonly head: BrowserElement | null;
    readonly documentElement: BrowserElement;
    querySelectorAll(selector: string): ArrayLike<BrowserElement>;
    createElement(tag: string): BrowserElement;
  };
}

/**
 * Runs in the page's isolated world, not here. The same rules as the `modifications` table of
 * docs/images.md; every name it cannot apply is a warning in the answer, in the order of the edits.
 */
export async function editLayers(input: LayerEdits): Promise<LayerEditsOutcome> {
  const g = globalThis as unknown as BrowserGlobals;
  const doc = g.document;
  const BACKGROUND = 'background';
  // Elements whose content is not plain text (or that hold none): text does not go in.
  const NO_TEXT = new Set([
    'area',
    'base',
    'br',
    'col',
    'embed',
    'hr',
    'img',
    'input',
    'link',
    'meta',
    'source',
    'track',
    'wbr',
    'script',
    'style',
    'xmp',
    'iframe',
    'noembed',
    'noframes',
    'noscript',
    'plaintext',
    'textarea',
    'title',
    'template',
  ]);
  const IMAGE_MARK = 'data-pressroom-layer-image';

  const byName = new Map<string, BrowserElement[]>();
  let layers = 0;
  for (const element of Array.from(doc.querySelectorAll('[data-layer],[data-layer-name]'))) {
    const name = element.getAttribute('data-layer')?.trim() || element.getAttribute('data-layer-name')?.trim();
    if (!name) continue;
    layers += 1;
    if (layers > input.maxLayers) continue;
    const list = byName.get(name);
    if (list) list.push(element);
    else byName.set(name, [element]);
  }
  if (layers > input.maxLayers) return { tooManyLayers: layers };

  const warnings: string[] = [];
  const decoded = new Map<number, Promise<boolean>>();
  const decode = (index: number): Promise<boolean> => {
    let done = decoded.get(index);
    if (!done) {
      const image = new g.Image();
      image.src = input.images[index]!;
      done = image.decode().then(
        () => true,
        () => false,
      );
      decoded.set(index, done);
    }
    return done;
  };
  const backgrounds = new Set<number>();
  const imageElements: BrowserElement[] = [];
  const undecodable: { name: string; image: number }[] = [];

  for (const edit of input.edits) {
    const byId = (): BrowserElement[] | undefined => {
      const found = Array.from(doc.querySelectorAll(`#${g.CSS.escape(edit.name)}`)).filter(
        (element) => element.getAttribute('id') === edit.name,
      );
      return found.length > 0 ? found : undefined;
    };
    const targets = byName.get(edit.name) ?? byId() ?? (edit.name === BACKGROUND && doc.body ? [doc.body] : []);
    if (targets.length === 0) {
      warnings.push(`Layer "${edit.name}" was not found in the template; its modification was skipped.`);
      continue;
    }
    if (edit.imageError !== undefined)
      warnings.push(`Layer "${edit.name}": image_url was not loaded (${edit.imageError}); the layer keeps its image.`);
    // The background layer is the page's backdrop: replacing its text or hiding it would wipe the whole image.
    const isBackground = edit.name === BACKGROUND;
    for (const field of ['text', 'hidden'] as const) {
      if (isBackground && edit[field] !== undefined)
        warnings.push(
          `Layer "${BACKGROUND}": ${field} does not apply to the background layer (background and image_url do).`,
        );
    }
    const refusedText = new Set<string>();
    if (edit.image !== undefined) undecodable.push({ name: edit.name, image: edit.image });
    for (const element of targets) {
      const style = element.style;
      if (edit.text !== undefined && !isBackground) {
        if (NO_TEXT.has(element.localName)) refusedText.add(element.localName);
        else element.textContent = edit.text;
      }
      if (edit.image !== undefined) {
        if (element.localName === 'img') {
          // A srcset (or a <picture>'s <source>) would otherwise win over src; a lazy image might never load.
          element.setAttribute('src', input.images[edit.image]!);
          for (const attribute of ['srcset', 'sizes', 'loading']) element.removeAttribute(attribute);
          const parent = element.parentElement;
          if (parent && parent.localName === 'picture') {
            for (const source of Array.from(parent.children)) if (source.localName === 'source') source.remove();
          }
          imageElements.push(element);
        } else {
          style.removeProperty('background-image');
          element.setAttribute(IMAGE_MARK, String(edit.image));
          backgrounds.add(edit.image);
        }
      }
      if (edit.color !== undefined) style.setProperty('color', edit.color, 'important');
      if (edit.background !== undefined) style.setProperty('background-color', edit.background, 'important');
      if (edit.hidden === true && !isBackground) style.setProperty('display', 'none', 'important');
      if (edit.hidden === false && !isBackground) {
        // An element hidden by the template's style sheet stays hidden: only the attribute and the inline style go.
        element.removeAttribute('hidden');
        if (style.getPropertyValue('display').trim() === 'none') style.removeProperty('display');
      }
    }
    for (const tag of refusedText) warnings.push(`Layer "${edit.name}" is a <${tag}>: text does not apply to it.`);
  }

  if (backgrounds.size > 0) {
    const quoted = (value: string) => `"${value.replace(/[\\"]/g, '\\$&').replace(/[\n\r\f]/g, ' ')}"`;
    const rules = [...backgrounds].map(
      (index) => `[${IMAGE_MARK}="${index}"]{background-image:url(${quoted(input.images[index]!)}) !important}`,
    );
    const sheet = doc.createElement('style');
    sheet.textContent = `@layer pressroom-layer-images{${rules.join('')}}`;
    // First in the document, so its layer is declared before any of the template's.
    (doc.head ?? doc.documentElement).prepend(sheet);
  }
  const ok = new Map<number, boolean>();
  for (const index of new Set(undecodable.map((u) => u.image))) ok.set(index, await decode(index));
  // Each <img> decoded as itself too: it is what the capture paints.
  await Promise.all(imageElements.map((element) => element.decode?.().catch(() => undefined)));
  const warned = new Set<string>();
  for (const { name, image } of undecodable) {
    if (ok.get(image) || warned.has(name)) continue;
    warned.add(name);
    warnings.push(`Layer "${name}": the image of image_url could not be decoded; the layer shows no image from it.`);
  }
  return { warnings };
}

/** `editLayers` as the source sent to the page. */
const BROWSER_FUNCTION = pageFunction(editLayers);
