/**
 * What a PDF/UA document needs from its template, read from the loaded page before it is printed:
 * a language (`<html lang>`), a title (`<title>`) and an alternative text on every image (`alt`, or
 * `alt=""` for decoration). Chromium fills in what is missing on its own — the browser's locale as
 * `/Lang`, the page's address as its title, a figure with no text — so the PDF cannot tell a template
 * that forgot them; the page can, and can name the element. Read in an isolated world: the template's
 * scripts cannot change what the survey's own code does.
 */
import type { CDPSession } from 'puppeteer-core';
import { isolatedWorld, pageFunction } from '../cdp-helpers.js';

const WORLD_NAME = 'pressroom-accessibility';
/** Elements named at most per problem (the rest are counted). */
const MAX_NAMED = 10;

export interface AccessibilityProblem {
  /** The Matterhorn Protocol checkpoint the PDF would fail. */
  checkpoint: '06-003' | '11-001' | '13-004';
  message: string;
}

export async function surveyAccessibility(
  session: CDPSession,
  frameId: string,
  signal: AbortSignal,
): Promise<AccessibilityProblem[]> {
  const call = await isolatedWorld(session, { frameId, worldName: WORLD_NAME }, signal);
  const { value, error } = await call(BROWSER_FUNCTION, MAX_NAMED);
  if (error !== undefined) throw new Error(`the accessibility survey failed: ${error}`);
  const found = value as { lang: string; title: string; images: string[]; moreImages: number };
  const problems: AccessibilityProblem[] = [];
  if (found.lang.trim() === '')
    problems.push({
      checkpoint: '11-001',
      message: 'The document declares no language: give its <html> element a lang attribute, e.g. <html lang="en">.',
    });
  if (found.title.trim() === '')
    problems.push({
      checkpoint: '06-003',
      message: 'The document has no title: add a <title> to its <head> (viewers show it instead of the file name).',
    });
  for (const image of found.images)
    problems.push({
      checkpoint: '13-004',
      message: `The image ${image} has no alternative text: give it alt="…" saying what it shows, or alt="" if it is only decoration.`,
    });
  if (found.moreImages > 0)
    problems.push({ checkpoint: '13-004', message: `${found.moreImages} more images have no alternative text.` });
  return problems;
}

interface BrowserElement {
  readonly outerHTML: string;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  closest(selector: string): BrowserElement | null;
}

/** Runs in the page, not here. */
function survey(maxNamed: number): { lang: string; title: string; images: string[]; moreImages: number } {
  const g = globalThis as unknown as {
    document: {
      documentElement: BrowserElement | null;
      title: string;
      querySelectorAll(selector: string): ArrayLike<BrowserElement>;
    };
  };
  const d = g.document;
  const images: string[] = [];
  let moreImages = 0;
  for (const img of Array.from(d.querySelectorAll('img:not([alt])'))) {
    // Not printed as content: hidden from assistive technology, or decoration by its role.
    if (img.closest('[aria-hidden="true"]') || /^(presentation|none)$/.test(img.getAttribute('role') ?? '')) continue;
    if (images.length >= maxNamed) {
      moreImages++;
      continue;
    }
    const src = img.getAttribute('src') ?? '';
    const shown = src.startsWith('data:') ? `${src.slice(0, 20)}…` : src.length > 80 ? `${src.slice(0, 80)}…` : src;
    images.push(src ? `<img src="${shown}">` : '<img> (no src)');
  }
  return { lang: d.documentElement?.getAttribute('lang') ?? '', title: d.title, images, moreImages };
}

const BROWSER_FUNCTION = pageFunction(survey);
