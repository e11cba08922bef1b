/**
 * Turns the server's error bodies into problems the editor can place: which pane, which line, what to say.
 * Two sources: a 422 validation body from saving (`loc` names the part, `ctx.line` the line) and a coded
 * template error (`{error, message, part, line, column}`, issue 13), whose `part` names the pane. The
 * message text is never parsed for a place. A coded error without `part` (a server before issue 13)
 * goes on the pane the caller knows is the likely one (the only one edited since the last good
 * preview), else on the HTML.
 * A PDF/UA refusal from Run (`loc ['body','pdf_ua']`, `type value_error.pdf_ua.<checkpoint>`) names the
 * element it is about in `ctx` (`{element: 'img', src}`, `{element: 'html'}`, `{element: 'h3'}`): given
 * the template's texts the finding is placed at that element's tag (pdfUaPlace), else on the HTML.
 */
import type { ValidationIssue } from './api-types.js';
import { inStudioWords } from './messages.js';
// The language's own lists (pure data, no imports): shown next to an unknown filter or test.
import { SUPPORTED_FILTERS, SUPPORTED_TESTS } from '../../../src/template-language/catalogue.js';

export type Pane =
  | 'html'
  | 'css'
  | 'header_html'
  | 'footer_html'
  | 'page'
  | 'sample_data'
  | 'fields'
  | 'name'
  | 'other';
export const CODE_PANES = ['html', 'css', 'header_html', 'footer_html'] as const;
export type CodePane = (typeof CODE_PANES)[number];

export const PANE_LABELS: Record<Pane, string> = {
  html: 'HTML',
  css: 'CSS',
  header_html: 'Header',
  footer_html: 'Footer',
  page: 'Page setup',
  sample_data: 'Sample data',
  fields: 'Fields',
  name: 'Name',
  other: 'Template',
};

export interface Problem {
  pane: Pane;
  /** 1-based line in that pane, when the server knows it. */
  line?: number;
  column?: number;
  message: string;
  /** The pane's text the problem was reported for; once the text changes the marker is stale. */
  source?: string;
}

/** Stamps each problem with the text (or value, as a string) of its pane it was reported for. */
export function withSources(problems: Problem[], sources: Partial<Record<Pane, string>>): Problem[] {
  return problems.map((p) => {
    const source = sources[p.pane];
    return source === undefined ? p : { ...p, source };
  });
}

/** Whether the pane's text changed since the problem was reported (it may be fixed; its marker would be misplaced). */
export function isStale(problem: Problem, current: Partial<Record<Pane, string>>): boolean {
  const now = current[problem.pane];
  return problem.source !== undefined && now !== undefined && now !== problem.source;
}

/** The template part names of coded errors (`part`) → the editor's panes. */
const PART_PANES: Record<string, CodePane> = {
  html: 'html',
  main: 'html',
  css: 'css',
  header: 'header_html',
  header_html: 'header_html',
  footer: 'footer_html',
  footer_html: 'footer_html',
};

function paneOfLoc(loc: readonly (string | number)[]): Pane {
  const path = loc[0] === 'body' ? loc.slice(1) : loc;
  const [first, second] = path;
  if (first === 'html' || first === 'css' || first === 'sample_data' || first === 'fields' || first === 'name')
    return first;
  if (first === 'page') return second === 'header_html' || second === 'footer_html' ? second : 'page';
  return 'other';
}

/** The template's code texts a refusal was for: where a PDF/UA finding's element is looked for. */
export type PaneTexts = Partial<Record<CodePane, string>>;

/** A finding of the PDF/UA check about the template (not a refused combination of options, `value_error.pdf_ua`). */
export function isPdfUaFinding(issue: Pick<ValidationIssue, 'loc' | 'type'>): boolean {
  return issue.loc[0] === 'body' && issue.loc[1] === 'pdf_ua' && /^value_error\.pdf_ua\.\d/.test(issue.type ?? '');
}

/** A start tag in a template's text: its name (lower case), where its `<` is, its attributes (null: no value). */
interface StartTag {
  name: string;
  offset: number;
  attributes: Map<string, string | null>;
}

// A comment (HTML or the template language's) is skipped whole; anything else that starts a tag is read.
const TAG_START = /<!--[\s\S]*?(?:-->|$)|\{#[\s\S]*?(?:#\}|$)|<([a-zA-Z][a-zA-Z0-9-]*)/g;
const ATTRIBUTE = /\s*([^\s"'<>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/y;

const decodeEntities = (value: string) =>
  value.replace(/&(amp|quot|apos|lt|gt|#39|#34);/g, (_, e: string) =>
    e === 'amp' ? '&' : e === 'lt' ? '<' : e === 'gt' ? '>' : e === 'quot' || e === '#34' ? '"' : "'",
  );

/** The start tags named `name` in a template's text, in order (a light reading, not an HTML parser). */
function startTags(text: string, name: string): StartTag[] {
  const tags: StartTag[] = [];
  TAG_START.lastIndex = 0;
  for (let m = TAG_START.exec(text); m; m = TAG_START.exec(text)) {
    if (m[1] === undefined || m[1].toLowerCase() !== name) continue;
    const attributes = new Map<string, string | null>();
    ATTRIBUTE.lastIndex = TAG_START.lastIndex;
    for (let a = ATTRIBUTE.exec(text); a; a = ATTRIBUTE.exec(text)) {
      const value = a[2] ?? a[3] ?? a[4];
      const key = a[1]!.toLowerCase();
      if (!attributes.has(key)) attributes.set(key, value === undefined ? null : decodeEntities(value));
    }
    tags.push({ name, offset: m.index, attributes });
    TAG_START.lastIndex = Math.max(TAG_START.lastIndex, ATTRIBUTE.lastIndex);
  }
  return tags;
}

/** 1-based line and column of an offset in a text. */
function lineColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lastBreak = before.lastIndexOf('\n');
  return { line: before.split('\n').length, column: offset - lastBreak };
}

/** Where the PDF/UA finding's element is found, with a flag when it is the very image the check named. */
interface Placed {
  pane: CodePane;
  line?: number;
  column?: number;
  /** The image whose `src` the finding names (not a guess among images without alt). */
  exact?: boolean;
}

const MAIN_FIRST: readonly CodePane[] = ['html', 'header_html', 'footer_html'];

/**
 * Where a PDF/UA finding belongs in the template's texts, by its `ctx.element` (never by its words): an
 * image at the `<img` whose `src` is the one named (else the first `<img` without `alt` not yet given
 * to another finding, `claimed`), the language at `<html`, the title at `<title` or `<head` (else line
 * 1), a heading (`h3`) or another element at its first tag. The main HTML is searched first, then the
 * header and the footer. Nothing found: the HTML, without a line.
 */
export function pdfUaPlace(
  ctx: Record<string, unknown> | undefined,
  texts: PaneTexts,
  claimed: Set<string> = new Set(),
): Placed {
  const element = typeof ctx?.element === 'string' ? ctx.element.toLowerCase() : '';
  const found = (
    names: readonly string[],
    accept: (tag: StartTag) => boolean = () => true,
  ): { pane: CodePane; tag: StartTag } | null => {
    for (const name of names)
      for (const pane of MAIN_FIRST) {
        const tag = startTags(texts[pane] ?? '', name).find((t) => !claimed.has(`${pane}:${t.offset}`) && accept(t));
        if (tag) return { pane, tag };
      }
    return null;
  };
  const at = (hit: { pane: CodePane; tag: StartTag }, exact?: boolean): Placed => ({
    pane: hit.pane,
    ...lineColumn(texts[hit.pane] ?? '', hit.tag.offset),
    ...(exact ? { exact } : {}),
  });
  if (element === 'img') {
    // The count of images not named has no one place.
    if (typeof ctx?.more === 'number') return { pane: 'html' };
    const src = typeof ctx?.src === 'string' ? ctx.src : null;
    const cut = ctx?.src_truncated === true;
    const bySrc =
      src === null
        ? null
        : found(['img'], (t) => {
            const value = t.attributes.get('src');
            return typeof value === 'string' && (cut ? value.startsWith(src) : value === src);
          });
    const hit = bySrc ?? found(['img'], (t) => !t.attributes.has('alt'));
    if (!hit) return { pane: 'html' };
    claimed.add(`${hit.pane}:${hit.tag.offset}`);
    return at(hit, bySrc !== null);
  }
  if (element === 'html') {
    const hit = found(['html']);
    return hit ? at(hit) : { pane: 'html' };
  }
  if (element === 'title') {
    const hit = found(['title']) ?? found(['head']);
    return hit ? at(hit) : texts.html !== undefined ? { pane: 'html', line: 1 } : { pane: 'html' };
  }
  if (/^[a-z][a-z0-9-]*$/.test(element)) {
    const hit = found([element]);
    if (hit) return at(hit);
  }
  return { pane: 'html' };
}

/** A PDF/UA finding as a problem at its element, in the studio's words ("This image has no alternative text: …"). */
function pdfUaProblem(issue: ValidationIssue, texts: PaneTexts, claimed: Set<string>): Problem {
  const { exact, ...place } = pdfUaPlace(issue.ctx, texts, claimed);
  const checkpoint = issue.type.slice('value_error.pdf_ua.'.length);
  // At the very image the check named, the line says which: the message need not repeat its address.
  const message = exact
    ? `This image has no alternative text: give it alt="…" saying what it shows, or alt="" if it is only decoration. PDF/UA needs it (Matterhorn checkpoint ${checkpoint}).`
    : inStudioWords(issue.msg);
  return { ...place, message };
}

function positionOf(issue: {
  msg?: string;
  message?: string;
  ctx?: Record<string, unknown>;
  line?: number;
  column?: number;
}): { line?: number; column?: number } {
  const line = typeof issue.ctx?.line === 'number' ? issue.ctx.line : issue.line;
  const column = typeof issue.ctx?.column === 'number' ? issue.ctx.column : issue.column;
  if (typeof line === 'number' && line > 0) return { line, column: typeof column === 'number' ? column : undefined };
  return {};
}

/** Problems from a 422 `{detail: [...]}` body; `texts`: the template's, where PDF/UA findings are placed. */
export function problemsFromValidation(detail: readonly ValidationIssue[], texts: PaneTexts = {}): Problem[] {
  // Each image tag goes to one finding: two images without alt are two places.
  const claimed = new Set<string>();
  return detail.map((issue) => {
    if (isPdfUaFinding(issue)) return pdfUaProblem(issue, texts, claimed);
    const pane = paneOfLoc(issue.loc);
    const where = pane === 'page' ? issue.loc.slice(2).join('.') : '';
    const message = inStudioWords(where ? `${where}: ${issue.msg}` : issue.msg);
    return { pane, message, ...positionOf(issue) };
  });
}

interface CodedErrorBody {
  error?: string;
  message?: string;
  part?: string;
  line?: number;
  column?: number;
}

/** Problems from a coded error body `{error, message, part?, line?, column?}`; `fallbackPane` when it names no part. */
export function problemsFromCodedError(body: CodedErrorBody, fallbackPane: CodePane = 'html'): Problem[] {
  const message = inStudioWords(body.message ?? body.error ?? 'The template could not be rendered.');
  const pane = (typeof body.part === 'string' ? PART_PANES[body.part] : undefined) ?? fallbackPane;
  return [{ pane, message, ...positionOf(body) }];
}

/** Problems from any error body the API may send; `texts` as for problemsFromValidation. */
export function problemsFromBody(body: unknown, fallbackPane: CodePane = 'html', texts: PaneTexts = {}): Problem[] {
  if (typeof body !== 'object' || body === null) return [];
  const b = body as CodedErrorBody & { detail?: unknown };
  if (Array.isArray(b.detail)) return problemsFromValidation(b.detail as ValidationIssue[], texts);
  if (typeof b.error === 'string') return problemsFromCodedError(b, fallbackPane);
  return [];
}

/** The one code pane whose text differs between two versions of the template, if exactly one does. */
export function onlyChangedPane(
  before: Partial<Record<CodePane, string>> | null,
  after: Partial<Record<CodePane, string>>,
): CodePane | undefined {
  if (!before) return undefined;
  const changed = CODE_PANES.filter((pane) => (before[pane] ?? '') !== (after[pane] ?? ''));
  return changed.length === 1 ? changed[0] : undefined;
}

/** One line for a person: "HTML, line 3: Template syntax error: …". */
export function describeProblem(problem: Problem): string {
  const where = problem.line ? `${PANE_LABELS[problem.pane]}, line ${problem.line}` : PANE_LABELS[problem.pane];
  return `${where}: ${problem.message}`;
}

/** The names the language has, when a problem is about one it does not ("unknown filter …"): the editor lists them. */
export function knownNames(problem: Problem): { kind: 'filter' | 'test'; names: string[] } | null {
  const kind = /unknown (filter|test) "/.exec(problem.message)?.[1] as 'filter' | 'test' | undefined;
  if (!kind) return null;
  return { kind, names: [...(kind === 'filter' ? SUPPORTED_FILTERS : SUPPORTED_TESTS)].sort() };
}
