/**
 * The documentation's own guard (issue 38): every relative link in README.md and docs/ reaches a file
 * that exists and, with a `#fragment`, a heading that exists (GitHub's anchors); the README stays the
 * front door (at most 200 lines) and each docs page a page (at most 400 lines) that opens with a
 * sentence. Pages move; this is what tells a move that a link still points at the old place.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import MarkdownIt from 'markdown-it';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const md = new MarkdownIt({ html: true });
type Token = ReturnType<typeof md.parse>[number];

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  );
}

const PAGES = [join(ROOT, 'README.md'), ...markdownFiles(join(ROOT, 'docs'))];

/** GitHub's heading anchor: lower case, punctuation and symbols dropped, each space a hyphen. */
function githubSlug(text: string): string {
  return text
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The text GitHub makes a heading's anchor from: what it shows, markup and HTML tags left out. */
function headingText(inline: Token): string {
  return (inline.children ?? []).map((c) => (c.type === 'text' || c.type === 'code_inline' ? c.content : '')).join('');
}

const HTML_ATTRIBUTE = /\s(?:href|src|id|name)="([^"]*)"/g;

const anchorCache = new Map<string, Set<string>>();
function anchorsOf(file: string): Set<string> {
  let anchors = anchorCache.get(file);
  if (anchors) return anchors;
  anchors = new Set();
  const seen = new Map<string, number>();
  const tokens = md.parse(readFileSync(file, 'utf8'), {});
  tokens.forEach((t, i) => {
    if (t.type === 'heading_open') {
      const slug = githubSlug(headingText(tokens[i + 1]!));
      const n = seen.get(slug) ?? 0;
      seen.set(slug, n + 1);
      anchors!.add(n === 0 ? slug : `${slug}-${n}`);
    }
    // <a id="…"> / <a name="…"> anchors written in HTML.
    for (const html of htmlOf(t)) for (const m of html.matchAll(/<a\s[^>]*(?:id|name)="([^"]+)"/g)) anchors!.add(m[1]!);
  });
  anchorCache.set(file, anchors);
  return anchors;
}

function htmlOf(t: Token): string[] {
  if (t.type === 'html_block' || t.type === 'html_inline') return [t.content];
  return (t.children ?? []).filter((c) => c.type === 'html_inline').map((c) => c.content);
}

/** Every link target a page has: Markdown links and images, and href/src in its HTML. */
function targetsOf(file: string): string[] {
  const targets: string[] = [];
  const walk = (tokens: Token[]) => {
    for (const t of tokens) {
      if (t.type === 'link_open') targets.push(String(t.attrGet('href') ?? ''));
      if (t.type === 'image') targets.push(String(t.attrGet('src') ?? ''));
      if (t.type === 'html_block' || t.type === 'html_inline') {
        for (const m of t.content.matchAll(HTML_ATTRIBUTE)) if (!/\sid=|\sname=/.test(m[0])) targets.push(m[1]!);
      }
      if (t.children) walk(t.children);
    }
  };
  walk(md.parse(readFileSync(file, 'utf8'), {}));
  return targets;
}

/** What is wrong with one link of a page, or null. */
function brokenLink(page: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // https:, mailto: …: not ours to check
  const [pathPart, fragment] = target.split('#', 2) as [string, string | undefined];
  const file = pathPart === '' ? page : resolve(dirname(page), decodeURIComponent(pathPart.split('?')[0]!));
  if (!existsSync(file)) return `${target}: no such file`;
  if (fragment === undefined || fragment === '') return null;
  if (statSync(file).isDirectory() || !file.endsWith('.md'))
    return `${target}: an anchor into a file that is not Markdown`;
  return anchorsOf(file).has(decodeURIComponent(fragment))
    ? null
    : `${target}: no heading with that anchor in ${relative(ROOT, file)}`;
}

describe('the documentation', () => {
  it('makes anchors as GitHub does', () => {
    expect(githubSlug('The PDF/A-3b (Factur-X / ZUGFeRD)')).toBe('the-pdfa-3b-factur-x--zugferd');
    expect(githubSlug('Numbers: exact, at most 15 significant digits')).toBe(
      'numbers-exact-at-most-15-significant-digits',
    );
    expect(githubSlug('Image layer work off the service’s thread (issue 37, case 3)')).toBe(
      'image-layer-work-off-the-services-thread-issue-37-case-3',
    );
    expect(githubSlug('Tagged or not — why')).toBe('tagged-or-not--why');
  });

  it('has no relative link to a missing file or heading', () => {
    const broken = PAGES.flatMap((page) =>
      targetsOf(page)
        .map((t) => brokenLink(page, t))
        .filter((b) => b !== null)
        .map((b) => `${relative(ROOT, page)}: ${b}`),
    );
    expect(broken).toEqual([]);
  });

  it('keeps the README at most 200 lines and each docs page at most 400', () => {
    const lines = (file: string) => readFileSync(file, 'utf8').split('\n').length - 1;
    expect(lines(join(ROOT, 'README.md'))).toBeLessThanOrEqual(200);
    const long = PAGES.slice(1)
      .filter((p) => lines(p) > 400)
      .map((p) => `${relative(ROOT, p)}: ${lines(p)} lines`);
    expect(long).toEqual([]);
  });

  it('opens each docs page with a title and then a sentence, not a table, list or code', () => {
    const wrong = PAGES.slice(1)
      .filter((page) => {
        const blocks = md
          .parse(readFileSync(page, 'utf8'), {})
          .filter((t) => t.level === 0 && !t.type.endsWith('_close') && t.type !== 'html_block');
        return blocks[0]?.type !== 'heading_open' || blocks[0].tag !== 'h1' || blocks[1]?.type !== 'paragraph_open';
      })
      .map((p) => relative(ROOT, p));
    expect(wrong).toEqual([]);
  });
});
