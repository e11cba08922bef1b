/**
 * Turns the server's error bodies into problems the editor can place: which pane, which line, what to say.
 * Two sources: a 422 validation body from saving (`loc` names the part, `ctx.line` the line) and a coded
 * template error (`{error, message, part, line, column}`, issue 13), whose `part` names the pane. The
 * message text is never parsed for a place. A coded error without `part` (a server before issue 13)
 * goes on the pane the caller knows is the likely one (the only one edited since the last good
 * preview), else on the HTML.
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

/** Problems from a 422 `{detail: [...]}` body. */
export function problemsFromValidation(detail: readonly ValidationIssue[]): Problem[] {
  return detail.map((issue) => {
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

/** Problems from any error body the API may send. */
export function problemsFromBody(body: unknown, fallbackPane: CodePane = 'html'): Problem[] {
  if (typeof body !== 'object' || body === null) return [];
  const b = body as CodedErrorBody & { detail?: unknown };
  if (Array.isArray(b.detail)) return problemsFromValidation(b.detail as ValidationIssue[]);
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
