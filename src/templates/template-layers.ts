/**
 * Layers: the elements of a template that image modifications address by name. An element is a
 * layer when it carries `data-layer="name"` (or TemplateFox's `data-layer-name="name"`); a modification
 * whose name no element carries falls back to the element with that `id`, as TemplateFox's does.
 * The reserved `background` layer always exists: the element named `background`, or else the page
 * (`<body>`).
 *
 * HTML is read with parse5, which implements the WHATWG parsing algorithm Chromium itself follows, so
 * the elements found here are the elements Chromium lays out (a regex or a lenient parser would
 * disagree on unclosed tags, implied elements and raw-text content).
 */
import { parse, type DefaultTreeAdapterTypes } from 'parse5';

type Element = DefaultTreeAdapterTypes.Element;
type ParentNode = DefaultTreeAdapterTypes.ParentNode;

/** What a layer is, which decides what may be modified on it. */
export type LayerType = 'text' | 'image' | 'shape' | 'background';

/** A layer as `GET /v1/templates/{id}/layers` lists it. */
export interface TemplateLayer {
  name: string;
  /** The element's tag, lower case. */
  tag: string;
  type: LayerType;
  /** The element's text as written in the template (`{{ }}` placeholders included); text layers only. */
  currentText?: string;
  /** The modification fields that apply to this layer. */
  modifiable: string[];
}

/** The name of the reserved layer that is always there. */
export const BACKGROUND_LAYER = 'background';

const LAYER_ATTRIBUTES = ['data-layer', 'data-layer-name'];
/** Elements that hold no content: a `text` modification cannot apply to them. */
const VOID_ELEMENTS = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr']);
const MODIFIABLE: Record<LayerType, string[]> = {
  text: ['text', 'color', 'background', 'image_url', 'hidden'],
  image: ['image_url', 'hidden'],
  shape: ['background', 'image_url', 'hidden'],
  background: ['background', 'image_url'],
};

/** Parses a whole HTML document (a fragment gets its implied html, head and body). */
export function parseDocument(html: string): DefaultTreeAdapterTypes.Document {
  return parse(html);
}

/** An element's attribute, or undefined. */
export function attributeOf(element: Element, name: string): string | undefined {
  return element.attrs.find((a) => a.name === name)?.value;
}

/** The layer name an element declares, if any (`data-layer` first, then `data-layer-name`). */
export function layerNameOf(element: Element): string | undefined {
  for (const attribute of LAYER_ATTRIBUTES) {
    const value = attributeOf(element, attribute)?.trim();
    if (value) return value;
  }
  return undefined;
}

/** Every element under `root` in document order (a `<template>`'s inert content is not rendered, so not visited). */
export function* elementsOf(root: ParentNode): Generator<Element> {
  for (const child of root.childNodes) {
    if (!('tagName' in child)) continue;
    yield child;
    yield* elementsOf(child);
  }
}

/** The document's `<body>` (parse5 always creates one). */
export function bodyOf(document: DefaultTreeAdapterTypes.Document): Element | undefined {
  for (const element of elementsOf(document)) if (element.tagName === 'body') return element;
  return undefined;
}

/** The element's text content, whitespace collapsed. */
export function textOf(element: Element): string {
  const parts: string[] = [];
  const walk = (node: ParentNode) => {
    for (const child of node.childNodes) {
      if (child.nodeName === '#text') parts.push((child as DefaultTreeAdapterTypes.TextNode).value);
      else if ('tagName' in child && child.tagName !== 'script' && child.tagName !== 'style') walk(child);
    }
  };
  walk(element);
  return parts.join('').replace(/\s+/g, ' ').trim();
}

/** What a (non-background) layer element is. */
export function layerTypeOf(element: Element): LayerType {
  if (element.tagName === 'img') return 'image';
  return !VOID_ELEMENTS.has(element.tagName) && textOf(element) !== '' ? 'text' : 'shape';
}

/** True when a `text` modification can apply (the element can hold content). */
export function canHoldText(element: Element): boolean {
  return !VOID_ELEMENTS.has(element.tagName);
}

/** Named layers by name, in document order. */
export function layerElements(document: DefaultTreeAdapterTypes.Document): Map<string, Element[]> {
  const byName = new Map<string, Element[]>();
  for (const element of elementsOf(document)) {
    const name = layerNameOf(element);
    if (name === undefined) continue;
    const list = byName.get(name);
    if (list) list.push(element);
    else byName.set(name, [element]);
  }
  return byName;
}

/**
 * The layers of a template's HTML as written (before its variables are filled in), with a warning for
 * each name several elements share (a modification of that name applies to all of them).
 */
export function listLayers(html: string): { layers: TemplateLayer[]; warnings: string[] } {
  const document = parseDocument(html);
  const byName = layerElements(document);
  const layers: TemplateLayer[] = [];
  const warnings: string[] = [];
  for (const [name, elements] of byName) {
    const element = elements[0]!;
    const type = name === BACKGROUND_LAYER ? 'background' : layerTypeOf(element);
    const layer: TemplateLayer = { name, tag: element.tagName, type, modifiable: MODIFIABLE[type] };
    if (type === 'text') layer.currentText = textOf(element);
    layers.push(layer);
    if (elements.length > 1) warnings.push(`Layer name "${name}" is used by ${elements.length} elements; a modification of it applies to all of them.`);
  }
  if (!byName.has(BACKGROUND_LAYER)) layers.unshift({ name: BACKGROUND_LAYER, tag: 'body', type: 'background', modifiable: MODIFIABLE.background });
  return { layers, warnings };
}
