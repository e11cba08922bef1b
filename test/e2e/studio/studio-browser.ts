/**
 * Helpers for driving the studio in Debian's Chromium with playwright-core: a fresh build when the
 * sources changed, the browser, screenshots as test artefacts, and the editor's CodeMirror panes.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

// Callbacks passed to page.evaluate run in the browser; the test build has no DOM lib, so these two are untyped here.
declare const document: any;
declare const window: any;

export const REPO_ROOT = join(import.meta.dirname, '..', '..', '..');
export const STUDIO_DIR = join(REPO_ROOT, 'studio');
export const SCREENSHOT_DIR = join(REPO_ROOT, 'test-artifacts', 'studio');
const DOCS_IMAGES_DIR = join(REPO_ROOT, 'docs', 'images');

export const DESKTOP = { width: 1280, height: 900 };
export const PHONE = { width: 390, height: 844 };

function newestMtime(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(stat.mtimeMs, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

/** Builds studio/dist unless it is newer than every source file. */
export function ensureStudioBuild(): void {
  const index = join(STUDIO_DIR, 'dist', 'index.html');
  const sources = ['src', 'public', 'index.html', 'vite.config.ts'].map((p) => join(STUDIO_DIR, p)).filter(existsSync);
  if (existsSync(index) && statSync(index).mtimeMs >= Math.max(...sources.map(newestMtime))) return;
  execFileSync(join(REPO_ROOT, 'node_modules', '.bin', 'vite'), ['build', STUDIO_DIR, '--logLevel', 'warn'], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
  });
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.PRESSROOM_TEST_CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-dev-shm-usage',
      '--disable-background-networking',
      '--disable-component-update',
      '--no-first-run',
    ],
  });
}

export interface StudioPage {
  context: BrowserContext;
  page: Page;
  /** Console errors and CSP violations seen so far. */
  problems: string[];
}

/** A fresh context (no shared sessionStorage) with downloads enabled. */
export async function openStudio(browser: Browser, baseUrl: string, viewport = DESKTOP): Promise<StudioPage> {
  const context = await browser.newContext({ baseURL: baseUrl, viewport, acceptDownloads: true });
  context.setDefaultTimeout(60_000);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    const text = message.text();
    if (/Content Security Policy|Refused to/i.test(text)) problems.push(text);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('crash', () => problems.push('page crashed'));
  return { context, page, problems };
}

/**
 * Records every successful preview PDF the page receives (the route passes each request through
 * unchanged and keeps a copy of the answer). `next()` resolves with the next one to arrive — or, given
 * `wanted`, the next one whose request body it accepts (a version's preview among live previews).
 */
export async function capturePreviews(page: Page): Promise<{
  pdfs: Buffer[];
  next(timeoutMs?: number, wanted?: (body: Record<string, unknown>) => boolean): Promise<Buffer>;
}> {
  const pdfs: Buffer[] = [];
  let waiting: { wanted: (body: Record<string, unknown>) => boolean; resolve: (pdf: Buffer) => void }[] = [];
  await page.route('**/v1/templates/preview', async (route) => {
    const requestBody = (route.request().postDataJSON() ?? {}) as Record<string, unknown>;
    const response = await route.fetch();
    const body = await response.body();
    if (response.status() === 200) {
      pdfs.push(body);
      const served = waiting.filter((w) => w.wanted(requestBody));
      waiting = waiting.filter((w) => !served.includes(w));
      served.forEach((w) => w.resolve(body));
    }
    await route.fulfill({ response, body });
  });
  return {
    pdfs,
    next(timeoutMs = 60_000, wanted = () => true) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no preview PDF within ${timeoutMs} ms`)), timeoutMs);
        waiting.push({
          wanted,
          resolve: (pdf) => {
            clearTimeout(timer);
            resolve(pdf);
          },
        });
      });
    },
  };
}

/** Writes test-artifacts/studio/<name>.png (and docs/images/studio-<name>.png when asked to). */
export async function screenshot(page: Page, name: string, options: { fullPage?: boolean } = {}): Promise<void> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: options.fullPage ?? false, animations: 'disabled', caret: 'hide' });
  const wanted = (process.env.PRESSROOM_UPDATE_DOCS_SCREENSHOTS ?? '').split(',').map((s) => s.trim());
  if (wanted.includes(name)) {
    mkdirSync(DOCS_IMAGES_DIR, { recursive: true });
    copyFileSync(path, join(DOCS_IMAGES_DIR, `studio-${name}.png`));
  }
}

/** Signs in through the form and waits for the header. */
export async function signIn(page: Page, apiKey: string, path = '/'): Promise<void> {
  await page.goto(path);
  await page.getByLabel('API key').fill(apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
}

/** The CodeMirror content element of one pane (`html`, `css`, `header_html`, `footer_html`, `sample-data`). */
export const editorContent = (page: Page, pane: string) => page.locator(`[data-editor="editor-${pane}"] .cm-content`);

/** Replaces a pane's whole text as a user would (select all, then type/paste). */
export async function setEditorText(page: Page, pane: string, text: string): Promise<void> {
  const content = editorContent(page, pane);
  await content.click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

/** A pane's text as CodeMirror holds it (one entry per line). */
export async function editorLines(page: Page, pane: string): Promise<string[]> {
  return editorContent(page, pane).locator('.cm-line').allInnerTexts();
}

/**
 * The line numbers that carry an error marker in a pane's lint gutter, found by lining each marker up
 * with the line-number gutter element at the same height.
 */
export async function lintMarkerLines(page: Page, pane: string): Promise<number[]> {
  return page.locator(`[data-editor="editor-${pane}"]`).evaluate((root) => {
    const numbers = [...root.querySelectorAll('.cm-lineNumbers .cm-gutterElement')].map((el) => ({
      top: el.getBoundingClientRect().top,
      text: el.textContent ?? '',
    }));
    return [...root.querySelectorAll('.cm-gutter-lint .cm-gutterElement')]
      .filter((el) => el.querySelector('.cm-lint-marker-error'))
      .map((el) => {
        const top = el.getBoundingClientRect().top;
        const match = numbers.find((n) => Math.abs(n.top - top) < 2 && /^\d+$/.test(n.text));
        return match ? Number(match.text) : -1;
      });
  });
}

/** Resolves once the page's web fonts are in and two frames have been laid out since: the layout has settled. */
export function layoutSettled(page: Page): Promise<void> {
  return page.evaluate(() =>
    document.fonts.ready.then(
      () =>
        new Promise<void>((resolve) =>
          window.requestAnimationFrame(() => window.requestAnimationFrame(() => resolve())),
        ),
    ),
  );
}

/** True when the page is no wider than the viewport (no sideways scrolling). */
export function hasNoHorizontalOverflow(
  page: Page,
): Promise<{ ok: boolean; scrollWidth: number; innerWidth: number; widest: string }> {
  return page.evaluate(() => {
    const doc = document.documentElement;
    let widest = '';
    let widestRight = 0;
    for (const el of document.querySelectorAll('body *')) {
      const right = el.getBoundingClientRect().right;
      if (right > widestRight && !el.closest('.tabs, .nav, pre, .cm-editor')) {
        widestRight = right;
        widest = `${el.tagName.toLowerCase()}.${el.className}`;
      }
    }
    return {
      ok: doc.scrollWidth <= window.innerWidth,
      scrollWidth: doc.scrollWidth,
      innerWidth: window.innerWidth,
      widest: `${widest} (${Math.round(widestRight)}px)`,
    };
  });
}
