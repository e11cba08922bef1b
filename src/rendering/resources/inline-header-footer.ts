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
 */
import { parseFragment, serialize, type DefaultTreeAdapterTypes } from 'parse5';
import type { DocumentResources } from '../chromium/closed-room.js';

type Node = DefaultTreeAdapterTypes.ChildNode | DefaultTreeAdapterTypes.DocumentFragment;
type Element = DefaultTreeAdapterTypes.Element;

const FONT_FACE = /@font-face\s*\{[^}]*\}/gi;
const CSS_URL = /url\(\s*(['"]?)([^'")]*)\1\s*\)/gi;
const FONT_FAMILY = /font-family\s*:\s*(['"]?)([^;'"}]+)\1/i;
const LOADABLE = /^(https?:\/\/)/i;

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
   * font from a data: URI only when the page itself has loaded that font (measured: without it,
   * `pdffonts` showed a fallback font every time). Empty when the part uses no font of its own.
   */
  preload: string;
}

/** The header or footer with its resources inlined; `undefined`/empty stays as it is. */
export async function inlineHeaderFooter(html: string | undefined, documentHtml: string, resources: DocumentResources): Promise<InlinedPart> {
  if (html === undefined || html.trim() === '') return { html, preload: '' };
  const needsWork = /<img|url\(/i.test(html) || /@font-face/i.test(documentHtml) || /@font-face/i.test(html);
  if (!needsWork) return { html, preload: '' };
  const fragment = parseFragment(html);
  const dataUris = new Map<string, Promise<string | undefined>>();
  const toDataUri = (url: string, resourceType: string): Promise<string | undefined> => {
    let found = dataUris.get(url);
    if (!found) {
      found = resources.load(url, resourceType).then((r) => (r ? `data:${r.contentType ?? 'application/octet-stream'};base64,${r.body.toString('base64')}` : undefined));
      dataUris.set(url, found);
    }
    return found;
  };
  const inlineCss = async (css: string, fonts: boolean): Promise<string> => {
    const urls = [...css.matchAll(CSS_URL)].map((m) => m[2]!.trim()).filter((u) => LOADABLE.test(u));
    if (urls.length === 0) return css;
    const replaced = new Map<string, string>();
    for (const url of urls) {
      const uri = await toDataUri(url, fonts ? 'Font' : 'Image');
      if (uri) replaced.set(url, uri);
    }
    return css.replace(CSS_URL, (whole, _quote: string, url: string) => {
      const uri = replaced.get(url.trim());
      return uri ? `url("${uri}")` : whole;
    });
  };

  const text: string[] = [];
  const words: string[] = [];
  const work: Promise<void>[] = [];
  const visit = (node: Node): void => {
    if (node.nodeName === '#text') words.push((node as DefaultTreeAdapterTypes.TextNode).value);
    if ('tagName' in node) {
      const element = node as Element;
      for (const attr of element.attrs) {
        if (attr.name === 'style') {
          text.push(attr.value);
          work.push(inlineCss(attr.value, false).then((css) => void (attr.value = css)));
        }
        if (attr.name === 'src' && element.tagName === 'img' && LOADABLE.test(attr.value.trim())) {
          work.push(toDataUri(attr.value.trim(), 'Image').then((uri) => void (uri && (attr.value = uri))));
        }
      }
      if (element.tagName === 'style') {
        for (const child of element.childNodes) {
          if (child.nodeName === '#text') {
            const textNode = child as DefaultTreeAdapterTypes.TextNode;
            text.push(textNode.value);
            words.pop(); // style text is not shown
            work.push(inlineCss(textNode.value, /@font-face/i.test(textNode.value)).then((css) => void (textNode.value = css)));
          }
        }
      }
    }
    if ('childNodes' in node) for (const child of node.childNodes) visit(child);
    if ('content' in node && node.content) visit(node.content as DefaultTreeAdapterTypes.DocumentFragment);
  };
  visit(fragment);

  // The document's fonts the header/footer names (in a style attribute or element of its own).
  const own = text.join('\n').toLowerCase();
  const ownFaces = new Set((own.match(FONT_FACE) ?? []).map((rule) => rule.toLowerCase()));
  const borrowed = fontFaceRules(documentHtml).filter((rule) => {
    const family = FONT_FAMILY.exec(rule)?.[2]?.trim().toLowerCase();
    return family !== undefined && own.includes(family) && !ownFaces.has(rule.toLowerCase());
  });
  const borrowedCss = borrowed.length > 0 ? inlineCss(borrowed.join('\n'), true) : Promise.resolve('');
  await Promise.all(work);
  const fonts = await borrowedCss;
  const out = serialize(fragment);
  const partHtml = fonts ? `<style>${escapeStyle(fonts)}</style>${out}` : out;
  return { html: partHtml, preload: preloadFor(`${fonts}\n${(serialize(fragment).match(STYLE_TEXT) ?? []).join('\n')}`, words.join(' ')) };
}

const STYLE_TEXT = /<style[^>]*>[\s\S]*?<\/style>/gi;

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
  const families = [...new Set(faces.map((rule) => FONT_FAMILY.exec(rule)?.[2]?.trim()).filter((f): f is string => !!f))];
  const shown = escapeText(text.replace(/\s+/g, ' ').trim().slice(0, 2000) || 'x');
  const spans = families
    .map((family) => `<span aria-hidden="true" style="position:absolute;left:0;top:0;width:0;height:0;overflow:hidden;font-family:'${family.replace(/['\\<>]/g, '')}'">${shown}</span>`)
    .join('');
  return `<style>${escapeStyle(faces.join('\n'))}</style><div aria-hidden="true" style="position:absolute;left:0;top:0;width:0;height:0;overflow:hidden">${spans}</div>`;
}
