/**
 * Why a print failed, when it was the page size: Chromium prints no page side past 65,535 pt, and a
 * document whose CSS asks for one fails with a bare "Printing failed" (issue 49: a 500). Reading the
 * CSS text cannot see every way to write a length (`1e5px`, `calc()`, `var()`, `100000Q`,
 * `!important`, a rule in an asset's style sheet), so after a failed print the page's own style
 * sheets are asked, in an isolated world, and each `@page { size }` length is resolved by the
 * browser's own CSS engine. Asked only after a failure: a document that prints pays nothing.
 */
import type { CDPSession } from 'puppeteer-core';
import { isolatedWorld, pageFunction } from '../cdp-helpers.js';

const WORLD_NAME = 'pressroom-page-size';

/** The first `@page { size }` with a side longer than `maxInches`, as written, or null. */
export async function oversizePageRule(
  session: CDPSession,
  frameId: string,
  maxInches: number,
  signal: AbortSignal,
): Promise<string | null> {
  const call = await isolatedWorld(session, { frameId, worldName: WORLD_NAME, universalAccess: true }, signal);
  const { value, error } = await call(BROWSER_FUNCTION, maxInches * 96);
  if (error !== undefined) return null;
  return typeof value === 'string' ? value : null;
}

interface BrowserRule {
  readonly type: number;
  readonly style?: { getPropertyValue(name: string): string };
  readonly cssRules?: ArrayLike<BrowserRule>;
  readonly styleSheet?: { readonly cssRules: ArrayLike<BrowserRule> } | null;
}
interface BrowserElement {
  style: { cssText: string; width: string };
  remove(): void;
}
interface BrowserDocument {
  readonly styleSheets: ArrayLike<{ readonly cssRules: ArrayLike<BrowserRule> }>;
  readonly adoptedStyleSheets?: ArrayLike<{ readonly cssRules: ArrayLike<BrowserRule> }>;
  readonly documentElement: { appendChild(e: BrowserElement): void } | null;
  createElement(name: string): BrowserElement;
}

/** Runs in the page, not here: the size of the first @page rule with a side over `maxPx` CSS pixels. */
function longestPageRule(maxPx: number): string | null {
  const g = globalThis as unknown as {
    document: BrowserDocument;
    getComputedStyle(e: BrowserElement): { width: string };
  };
  const root = g.document.documentElement;
  if (!root) return null;
  const probe = g.document.createElement('div');
  probe.style.cssText = 'position:absolute;visibility:hidden;box-sizing:content-box;padding:0;border:0';
  root.appendChild(probe);
  const PAGE_RULE = 6;
  let found: string | null = null;
  const sides = (size: string): string[] => {
    // Top-level words: `calc(1in + 2in) 3in` is two sides.
    const words: string[] = [];
    let depth = 0;
    let word = '';
    for (const ch of size) {
      if (ch === '(') depth++;
      if (ch === ')') depth--;
      if (/\s/.test(ch) && depth === 0) {
        if (word) words.push(word);
        word = '';
      } else word += ch;
    }
    if (word) words.push(word);
    return words;
  };
  const tooLong = (size: string): boolean =>
    sides(size).some((side) => {
      probe.style.width = '';
      probe.style.width = side;
      return probe.style.width !== '' && Number.parseFloat(g.getComputedStyle(probe).width) > maxPx;
    });
  const visit = (rules: ArrayLike<BrowserRule>, depth: number): void => {
    for (const rule of Array.from(rules)) {
      if (found || depth > 20) return;
      if (rule.type === PAGE_RULE) {
        const size = rule.style?.getPropertyValue('size') ?? '';
        if (size && tooLong(size)) found = size;
      }
      if (rule.cssRules) visit(rule.cssRules, depth + 1);
      if (rule.styleSheet) read(rule.styleSheet, depth + 1);
    }
  };
  const read = (sheet: { readonly cssRules: ArrayLike<BrowserRule> }, depth: number): void => {
    try {
      visit(sheet.cssRules, depth);
    } catch {
      // A sheet this world may not read.
    }
  };
  try {
    for (const sheet of [...Array.from(g.document.styleSheets), ...Array.from(g.document.adoptedStyleSheets ?? [])])
      read(sheet, 0);
  } finally {
    probe.remove();
  }
  return found;
}

/** `longestPageRule` as the source sent to the page. */
const BROWSER_FUNCTION = pageFunction(longestPageRule);
