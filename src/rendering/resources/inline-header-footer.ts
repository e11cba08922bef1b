/**
 * Chromium prints `headerTemplate`/`footerTemplate` in a document of their own that loads nothing
 * from the network (users of Gotenberg and puppeteer meet this as a logo or font that shows in the
 * body and not in the footer). So, in Node, on the evaluated header/footer HTML, before printing:
 *   - every `<img src>`, and every `url(…)` in its `<style>` elements and `style` attributes, that
 *     names an asset or an http(s) resource is loaded through the document's resources (the same
 *     account, bounds and warnings as the body) and replaced by a `data:` URI;
 *   - the `@font-face` rules of the document (its `<style>` elements, the template CSS included)
 *     whose family the header/footer names are copied into it with their fonts inlined the same
 *     way, so a brand font declared once for the body also works in the header.
 * A resource that cannot be loaded stays as it was (and prints nothing), with its warning.
 *
 * Every use carries the whole file (issue 37: 350 uses of a 10 MiB asset in a header grew the
 * process past its heap). So each resource is loaded once, the part's size once inlined is counted
 * — every use, times its data: URI's length — and a part past HEADER_FOOTER_MAX_CHARS is refused
 * before any of it is built.
 */
import { parseFragment, serialize, type DefaultTreeAdapterTypes } from 'parse5';
import type { AssetResponse, DocumentResources } from '../../browser/pages/closed-room.js';
import { headerFooterTooLarge } from '../../browser/pages/document-bounds.js';

type Node = DefaultTreeAdapterTypes.ChildNode | DefaultTreeAdapterTypes.DocumentFragment;
type Element = DefaultTreeAdapterTypes.Element;

const FONT_FACE = /@font-face\s*\{[^}]*\}/gi;
const CSS_URL = /url\(\s*(['"]?)([^'")]*)\1\s*\)/gi;
const FONT_FAMILY = /font-family\s*:\s*(['"]?)([^;'"}]+)\1/i;
const LOADABLE = /^(https?:\/\/)/i;

/**
 * Most characters a header or footer may have once its resources are inlined. Chromium lays the
 * part out again on every page (bench/costs/header-cost.ts, docs/performance-log/2026-11-28-issue-37.md), so a few MiB is
 * what a header can carry: a logo and a brand font, with room.
 */
export const HEADER_FOOTER_MAX_CHARS = 4 * 1024 * 1024;

/** Characters `url("")` and attribute quoting may add around each inlined use, counted generously. */
const PER_USE_CHARS = 16;

/** The document's `@font-face` rules (taken from its text: cheap, and a rule has no nested braces). */
export function fontFaceRules(documentHtml: string): string[] {
  if (!/@font-face/i.test(documentHtml)) return [];
  return documentHtml.match(FONT_FACE) ?? [];
}

/** A header or footer ready for Chromium, and what the main document must carry for its fonts. */
export interface InlinedPart {
  html: string | undefined;
  /**
   * Markup for the main document: the part's `@font-face` rules (fonts inlined) and an invisible,
   * zero-size element using each of those fonts with the part's text. Chromium draws a header
   * font from a data: URI only when the page itself has loaded that font (without it `pdffonts`
   * shows a fallback font). Empty when the part uses no font of its own.
   */
  preload: string;
}

export interface InlineOptions {
  part: 'header' | 'footer';
  /** The evaluated main document, whose `@font-face` rules the part may borrow. */
  documentHtml: string;
  resources: DocumentResources;
}

/** A piece of the part's CSS: a `style` attribute or the text of a `<style>` element. */
interface CssText {
  value: string;
  fonts: boolean;
  element: boolean;
  set(value: string): void;
}

/** The header or footer with its resources inlined; `undefined`/empty stays as it is. */
export async function inlineHeaderFooter(html: string | undefined, options: InlineOptions): Promise<InlinedPart> {
  if (html === undefined || html.trim() === '') return { html, preload: '' };
  // The bound is on the part as Chromium gets it, whatever it carries: checked before it is parsed too.
  if (html.length > HEADER_FOOTER_MAX_CHARS)
    throw headerFooterTooLarge(options.part, html.length, HEADER_FOOTER_MAX_CHARS);
  const { documentHtml, resources } = options;
  const needsWork = /<img|url\(/i.test(html) || /@font-face/i.test(documentHtml) || /@font-face/i.test(html);
  if (!needsWork) return { html, preload: '' };
  const fragment = parseFragment(html);

  // What the part uses: its CSS texts, its images' sources, and the words it shows.
  const css: CssText[] = [];
  const images: { url: string; set(value: string): void }[] = [];
  const words: string[] = [];
  const visit = (node: Node): void => {
    if (node.nodeName === '#text') words.push((node as DefaultTreeAdapterTypes.TextNode).value);
    if ('tagName' in node) {
      const element = node as Element;
      for (const attr of element.attrs) {
        if (attr.name === 'style')
          css.push({ value: attr.value, fonts: false, element: false, set: (value) => void (attr.value = value) });
        if (attr.name === 'src' && element.tagName === 'img' && LOADABLE.test(attr.value.trim()))
          images.push({ url: attr.value.trim(), set: (value) => void (attr.value = value) });
      }
      if (element.tagName === 'style') {
        // Style text is not shown: its nodes are not visited as words.
        for (const child of element.childNodes) {
          if (child.nodeName !== '#text') continue;
          const textNode = child as DefaultTreeAdapterTypes.TextNode;
          css.push({
            value: textNode.value,
            fonts: /@font-face/i.test(textNode.value),
            element: true,
            set: (value) => void (textNode.value = value),
          });
        }
        return;
      }
    }
    if ('childNodes' in node) for (const child of node.childNodes) visit(child);
    if ('content' in node && node.content) visit(node.content as DefaultTreeAdapterTypes.DocumentFragment);
  };
  visit(fragment);

  // The document's fonts the header/footer names (in a style attribute or element of its own).
  const own = css
    .map((text) => text.value)
    .join('\n')
    .toLowerCase();
  const ownFaces = new Set((own.match(FONT_FACE) ?? []).map((rule) => rule.toLowerCase()));
  const borrowed = fontFaceRules(documentHtml)
    .filter((rule) => {
      const family = FONT_FAMILY.exec(rule)?.[2]?.trim().toLowerCase();
      return family !== undefined && own.includes(family) && !ownFaces.has(rule.toLowerCase());
    })
    .join('\n');

  // Every use of every loadable URL, counted; each URL is loaded once.
  const uses = new Map<string, { count: number; resourceType: string }>();
  const use = (url: string, resourceType: string): void => {
    const found = uses.get(url);
    if (found) found.count += 1;
    else uses.set(url, { count: 1, resourceType });
  };
  for (const text of css) for (const url of cssUrls(text.value)) use(url, text.fonts ? 'Font' : 'Image');
  for (const image of images) use(image.url, 'Image');
  for (const url of cssUrls(borrowed)) use(url, 'Font');
  const loaded = new Map<string, AssetResponse>();
  await Promise.all(
    [...uses].map(async ([url, { resourceType }]) => {
      const resource = await resources.load(url, resourceType);
      if (resource) loaded.set(url, resource);
    }),
  );

  // The part's size once inlined, before any of it is built.
  let chars = html.length + borrowed.length;
  for (const [url, resource] of loaded) chars += uses.get(url)!.count * (dataUriLength(resource) + PER_USE_CHARS);
  if (chars > HEADER_FOOTER_MAX_CHARS) throw headerFooterTooLarge(options.part, chars, HEADER_FOOTER_MAX_CHARS);

  const dataUris = new Map<string, string>();
  const dataUriOf = (url: string): string | undefined => {
    const resource = loaded.get(url);
    if (!resource) return undefined;
    let uri = dataUris.get(url);
    if (uri === undefined) {
      uri = `${dataUriPrefix(resource)}${resource.body.toString('base64')}`;
      dataUris.set(url, uri);
    }
    return uri;
  };
  const inlineCss = (text: string): string =>
    text.replace(CSS_URL, (whole, _quote: string, url: string) => {
      const uri = LOADABLE.test(url.trim()) ? dataUriOf(url.trim()) : undefined;
      return uri ? `url("${uri}")` : whole;
    });
  for (const text of css) {
    if (cssUrls(text.value).length === 0) continue;
    text.value = inlineCss(text.value);
    text.set(text.value);
  }
  for (const image of images) {
    const uri = dataUriOf(image.url);
    if (uri) image.set(uri);
  }
  const fonts = borrowed ? inlineCss(borrowed) : '';
  const out = serialize(fragment);
  const partHtml = fonts ? `<style>${escapeStyle(fonts)}</style>${out}` : out;
  const styleText = css.filter((text) => text.element).map((text) => text.value);
  return { html: partHtml, preload: preloadFor([fonts, ...styleText].join('\n'), words.join(' ')) };
}

/** The loadable URLs `css` names, one entry per use. */
function cssUrls(css: string): string[] {
  if (!/url\(/i.test(css)) return [];
  return [...css.matchAll(CSS_URL)].map((m) => m[2]!.trim()).filter((url) => LOADABLE.test(url));
}

function dataUriPrefix(resource: AssetResponse): string {
  return `data:${resource.contentType ?? 'application/octet-stream'};base64,`;
}

/** The length of `resource`'s data: URI, without building it. */
function dataUriLength(resource: AssetResponse): number {
  return dataUriPrefix(resource).length + 4 * Math.ceil(resource.body.length / 3);
}

function escapeStyle(css: string): string {
  return css.replace(/<\/style/gi, '<\\/style');
}

function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** The main-document markup that makes Chromium load the part's fonts (see InlinedPart.preload). */
function preloadFor(css: string, text: string): string {
  const faces = (css.match(FONT_FACE) ?? []).filter((rule) => /url\(\s*['"]?data:/i.test(rule));
  if (faces.length === 0) return '';
  const families = [
    ...new Set(faces.map((rule) => FONT_FAMILY.exec(rule)?.[2]?.trim()).filter((f): f is string => !!f)),
  ];
  const shown = escapeText(text.replace(/\s+/g, ' ').trim().slice(0, 2000) || 'x');
  const spans = families
    .map(
      (family) =>
        `<span aria-hidden="true" style="position:absolute;left:0;top:0;width:0;height:0;overflow:hidden;font-family:'${family.replace(/['\\<>]/g, '')}'">${shown}</span>`,
    )
    .join('');
  return `<style>${escapeStyle(faces.join('\n'))}</style><div aria-hidden="true" style="position:absolute;left:0;top:0;width:0;height:0;overflow:hidden">${spans}</div>`;
}
