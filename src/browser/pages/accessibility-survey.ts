/**
 * What a PDF/UA document needs from its template, read from the loaded page before it is printed:
 * a language (`<html lang>`), a title (`<title>`) and an alternative text on every image (`alt`, or
 * `alt=""` for decoration). Chromium fills in what is missing on its own — the browser's locale as
 * `/Lang`, the page's address as its title, a figure with no text — so the PDF cannot tell a template
 * that forgot them; the page can, and can name the element. Read in an isolated world: the template's
 * scripts cannot change what the survey's own code does. Each problem names its element for programs
 * too (`ctx`, carried into the 422 item): the studio finds the tag in the template's text by it, never
 * by the message's words.
 */
import type { CDPSession } from 'puppeteer-core';
import { isolatedWorld, pageFunction } from '../cdp-helpers.js';

const WORLD_NAME = 'pressroom-accessibility';
/** Elements named at most per problem (the rest are counted). */
const MAX_NAMED = 10;
/** Characters of an image's `src` at most in `ctx.src` (a data: URL may be megabytes). */
const MAX_CTX_SRC = 200;

export interface AccessibilityProblem {
  /** The Matterhorn Protocol checkpoint the PDF would fail. */
  checkpoint: '06-003' | '11-001' | '13-004';
  message: string;
  /**
   * The element, for programs: `{element: 'html'}`, `{element: 'title'}`, or `{element: 'img', src}` with
   * the image's `src` attribute as written (its first MAX_CTX_SRC characters, `src_truncated` when cut;
   * absent when it has none), or `{element: 'img', more}` counting the images not named.
   */
  ctx: AccessibilityContext;
}

export type AccessibilityContext =
  | { element: 'html' | 'title' }
  | { element: 'img'; src?: string; src_truncated?: true }
  | { element: 'img'; more: number };

export async function surveyAccessibility(
  session: CDPSession,
  frameId: string,
  signal: AbortSignal,
): Promise<AccessibilityProblem[]> {
  const call = await isolatedWorld(session, { frameId, worldName: WORLD_NAME }, signal);
  const { value, error } = await call(BROWSER_FUNCTION, { maxNamed: MAX_NAMED, maxSrc: MAX_CTX_SRC });
  if (error !== undefined) throw new Error(`the accessibility survey failed: ${error}`);
  const found = value as SurveyFound;
  const problems: AccessibilityProblem[] = [];
  if (found.lang.trim() === '')
    problems.push({
      checkpoint: '11-001',
      message: 'The document declares no language: give its <html> element a lang attribute, e.g. <html lang="en">.',
      ctx: { element: 'html' },
    });
  if (found.title.trim() === '')
    problems.push({
      checkpoint: '06-003',
      message: 'The document has no title: add a <title> to its <head> (viewers show it instead of the file name).',
      ctx: { element: 'title' },
    });
  for (const { shown, src } of found.images)
    problems.push({
      checkpoint: '13-004',
      message: `The image ${shown} has no alternative text: give it alt="…" saying what it shows, or alt="" if it is only decoration.`,
      ctx: { element: 'img', ...srcContext(src) },
    });
  if (found.moreImages > 0)
    problems.push({
      checkpoint: '13-004',
      message: `${found.moreImages} more images have no alternative text.`,
      ctx: { element: 'img', more: found.moreImages },
    });
  return problems;
}

function srcContext(src: string | null): { src?: string; src_truncated?: true } {
  if (src === null) return {};
  return src.length > MAX_CTX_SRC ? { src: src.slice(0, MAX_CTX_SRC), src_truncated: true } : { src };
}

interface BrowserElement {
  readonly outerHTML: string;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  closest(selector: string): BrowserElement | null;
}

interface SurveyFound {
  lang: string;
  title: string;
  /** Each image named: as the message shows it, and its `src` attribute (null: none; at most maxSrc + 1 characters). */
  images: { shown: string; src: string | null }[];
  moreImages: number;
}

/** Runs in the page, not here. */
function survey({ maxNamed, maxSrc }: { maxNamed: number; maxSrc: number }): SurveyFound {
  const g = globalThis as unknown as {
    document: {
      documentElement: BrowserElement | null;
      title: string;
      querySelectorAll(selector: string): ArrayLike<BrowserElement>;
    };
  };
  const d = g.document;
  const images: { shown: string; src: string | null }[] = [];
  let moreImages = 0;
  for (const img of Array.from(d.querySelectorAll('img:not([alt])'))) {
    // Not printed as content: hidden from assistive technology, or decoration by its role.
    if (img.closest('[aria-hidden="true"]') || /^(presentation|none)$/.test(img.getAttribute('role') ?? '')) continue;
    if (images.length >= maxNamed) {
      moreImages++;
      continue;
    }
    const attribute = img.getAttribute('src');
    const src = attribute ?? '';
    const shown = src.startsWith('data:') ? `${src.slice(0, 20)}…` : src.length > 80 ? `${src.slice(0, 80)}…` : src;
    // One character past the bound crosses back, to tell a cut src from one of exactly that length.
    images.push({
      shown: src ? `<img src="${shown}">` : '<img> (no src)',
      src: attribute?.slice(0, maxSrc + 1) ?? null,
    });
  }
  return { lang: d.documentElement?.getAttribute('lang') ?? '', title: d.title, images, moreImages };
}

const BROWSER_FUNCTION = pageFunction(survey);
