/**
 * Layers: the elements of a template that image modifications address by name. An element is a
 * layer when it carries `data-layer="name"` (or TemplateFox's `data-layer-name="name"`); a modification
 * whose name no element carries falls back to the element with that `id`, as TemplateFox's does.
 * The reserved `background` layer always exists: the element named `background`, or else the page
 * (`<body>`).
 *
 * HTML is read with parse5, which implements the WHATWG parsing algorithm Chromium itself follows, so
 * the elements found here are the elements Chromium lays out (a regex or a lenient parser would
 * disagree on unclosed tags, implied elements and raw-text content). The listing runs on a thread of
 * its own (layer-listing.ts), never on the service's: parsing a 2 MB template takes seconds. What it
 * answers is bounded: at most MAX_TEMPLATE_LAYERS layers (past it the template is refused, as image
 * modifications refuse it), each `current_text` at most MAX_CURRENT_TEXT_CHARS characters.
 */
import { parse, type DefaultTreeAdapterTypes } from 'parse5';

type Element = DefaultTreeAdapterTypes.Element;
type ChildNode = DefaultTreeAdapterTypes.ChildNode;

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

/**
 * The most layer elements a template may have for its layers to be listed and modified: image
 * templates have tens (TemplateFox documents no bound); past it, each modification's lookup and the
 * listing's answer grow with a template's size rather than with what a card needs.
 */
export const MAX_TEMPLATE_LAYERS = 1000;

/** The most characters of a layer's `current_text` listed (then "…"): enough to recognise it. */
export const MAX_CURRENT_TEXT_CHARS = 500;

/** The layers of a template, or the count of its layer elements when they are past MAX_TEMPLATE_LAYERS. */
export type LayerListing = { layers: TemplateLayer[]; warnings: string[] } | { tooManyLayers: number };

const LAYER_ATTRIBUTES = ['data-layer', 'data-layer-name'];
/** Elements that hold no content: a `text` modification cannot apply to them. */
const VOID_ELEMENTS = new Set([
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
]);
/** Elements whose text is not the element's text (textContent-like, as listed before). */
const NOT_TEXT = new Set(['script', 'style']);
const MODIFIABLE: Record<LayerType, string[]> = {
  text: ['text', 'color', 'background', 'image_url', 'hidden'],
  image: ['image_url', 'hidden'],
  shape: ['background', 'image_url', 'hidden'],
  background: ['background', 'image_url'],
};

/** The layer name an element declares, if any (`data-layer` first, then `data-layer-name`). */
function layerNameOf(element: Element): string | undefined {
  for (const attribute of LAYER_ATTRIBUTES) {
    const value = element.attrs.find((a) => a.name === attribute)?.value.trim();
    if (value) return value;
  }
  return undefined;
}

/** The start of one element's text, whitespace collapsed, kept to MAX_CURRENT_TEXT_CHARS (and one more, to know it was cut). */
class TextCollector {
  #text = '';
  full = false;
  /** Script and style elements entered below the layer element: their text is not its text. */
  paused = 0;

  /** Adds a text node's value, whitespace already collapsed (once for all collectors): at most what is still missing. */
  add(collapsed: string): void {
    // Two more than missing: a join of two spaces may still collapse into one.
    this.#text = `${this.#text}${collapsed.slice(0, MAX_CURRENT_TEXT_CHARS + 2 - this.#text.length)}`
      .replace(/ {2,}/g, ' ')
      .trimStart();
    if (this.#text.length > MAX_CURRENT_TEXT_CHARS) this.full = true;
  }

  text(): string {
    const text = this.#text.trim();
    if (text.length <= MAX_CURRENT_TEXT_CHARS) return text;
    const cut = text.slice(0, MAX_CURRENT_TEXT_CHARS);
    // Not half a surrogate pair.
    return `${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
  }
}

/**
 * The layers of a template's HTML as written (before its variables are filled in), with a warning for
 * each name several elements share (a modification of that name applies to all of them). One walk
 * over the document, without recursion (a template may nest elements thousands deep).
 */
export function listLayers(html: string): LayerListing {
  const document = parse(html);
  const first = new Map<string, { element: Element; count: number; text?: TextCollector }>();
  let layers = 0;
  const open: TextCollector[] = [];
  // Each entry: a node to enter, or the end of an element (what to undo when leaving it).
  const stack: ({ node: ChildNode } | { leave: { collector?: TextCollector; pauses: boolean } })[] = document.childNodes
    .map((node) => ({ node }))
    .reverse();
  while (stack.length > 0) {
    const entry = stack.pop()!;
    if ('leave' in entry) {
      if (entry.leave.collector) open.splice(open.indexOf(entry.leave.collector), 1);
      if (entry.leave.pauses) for (const collector of open) collector.paused -= 1;
      continue;
    }
    const node = entry.node;
    if (node.nodeName === '#text') {
      const collecting = open.filter((collector) => collector.paused === 0 && !collector.full);
      if (collecting.length === 0) continue;
      // Collapsed once for all the collectors: each text node is scanned once, however many layers hold it.
      const value = (node as DefaultTreeAdapterTypes.TextNode).value.replace(/\s+/g, ' ');
      for (const collector of collecting) collector.add(value);
      continue;
    }
    if (!('tagName' in node)) continue;
    const pauses = NOT_TEXT.has(node.tagName);
    if (pauses) for (const collector of open) collector.paused += 1;
    const name = layerNameOf(node);
    let collector: TextCollector | undefined;
    if (name !== undefined) {
      layers += 1;
      const seen = first.get(name);
      if (seen) seen.count += 1;
      else if (first.size < MAX_TEMPLATE_LAYERS) {
        // Only the first element of a name is described: its text is collected on the way down.
        collector = new TextCollector();
        open.push(collector);
        first.set(name, { element: node, count: 1, text: collector });
      }
    }
    stack.push({ leave: { collector, pauses } });
    // A <template>'s inert content is not rendered: parse5 keeps it apart, so it is not visited.
    for (let i = node.childNodes.length - 1; i >= 0; i--) stack.push({ node: node.childNodes[i]! });
  }
  if (layers > MAX_TEMPLATE_LAYERS) return { tooManyLayers: layers };

  const listed: TemplateLayer[] = [];
  const warnings: string[] = [];
  for (const [name, { element, count, text }] of first) {
    const content = VOID_ELEMENTS.has(element.tagName) ? '' : (text?.text() ?? '');
    const type: LayerType =
      name === BACKGROUND_LAYER
        ? 'background'
        : element.tagName === 'img'
          ? 'image'
          : content !== ''
            ? 'text'
            : 'shape';
    const layer: TemplateLayer = { name, tag: element.tagName, type, modifiable: MODIFIABLE[type] };
    if (type === 'text') layer.currentText = content;
    listed.push(layer);
    if (count > 1)
      warnings.push(`Layer name "${name}" is used by ${count} elements; a modification of it applies to all of them.`);
  }
  if (!first.has(BACKGROUND_LAYER))
    listed.unshift({ name: BACKGROUND_LAYER, tag: 'body', type: 'background', modifiable: MODIFIABLE.background });
  return { layers: listed, warnings };
}
