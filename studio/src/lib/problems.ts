/**
 * Turns the server's error bodies into problems the editor can place: which pane, which line, what to say.
 * Two sources: a 422 validation body from saving (`loc` names the part, `ctx.line` the line) and a coded
 * 422 from the preview (`line`/`column` refer to the HTML unless the message names another part).
 */
import type { ValidationIssue } from './api-types.js';

export type Pane = 'html' | 'css' | 'header_html' | 'footer_html' | 'page' | 'sample_data' | 'fields' | 'name' | 'other';
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

/** Stamps each code-pane problem with the text it was reported for. */
export function withSources(problems: Problem[], sources: Partial<Record<CodePane, string>>): Problem[] {
  return problems.map((p) => {
    const source = (CODE_PANES as readonly string[]).includes(p.pane) ? sources[p.pane as CodePane] : undefined;
    return source === undefined ? p : { ...p, source };
  });
}

const LINE_IN_MESSAGE = /\(line (\d+)(?:, column (\d+))?\)/;

function paneOfLoc(loc: readonly (string | number)[]): Pane {
  const path = loc[0] === 'body' ? loc.slice(1) : loc;
  const [first, second] = path;
  if (first === 'html' || first === 'css' || first === 'sample_data' || first === 'fields' || first === 'name') return first;
  if (first === 'page') return second === 'header_html' || second === 'footer_html' ? second : 'page';
  return 'other';
}

function positionOf(issue: { msg?: string; message?: string; ctx?: Record<string, unknown>; line?: number; column?: number }): { line?: number; column?: number } {
  const line = typeof issue.ctx?.line === 'number' ? issue.ctx.line : issue.line;
  const column = typeof issue.ctx?.column === 'number' ? issue.ctx.column : issue.column;
  if (typeof line === 'number' && line > 0) return { line, column: typeof column === 'number' ? column : undefined };
  const match = LINE_IN_MESSAGE.exec(issue.msg ?? issue.message ?? '');
  if (match) return { line: Number(match[1]), column: match[2] ? Number(match[2]) : undefined };
  return {};
}

/** Problems from a 422 `{detail: [...]}` body. */
export function problemsFromValidation(detail: readonly ValidationIssue[]): Problem[] {
  return detail.map((issue) => {
    const pane = paneOfLoc(issue.loc);
    const where = pane === 'page' ? issue.loc.slice(2).join('.') : '';
    const message = where ? `${where}: ${issue.msg}` : issue.msg;
    return { pane, message, ...positionOf(issue) };
  });
}

/** The pane a coded template error (preview) is about: the HTML, unless its message names another part. */
export function paneOfMessage(message: string): CodePane {
  if (/\bheader\b/i.test(message)) return 'header_html';
  if (/\bfooter\b/i.test(message)) return 'footer_html';
  if (/\b(css|stylesheet)\b/i.test(message)) return 'css';
  return 'html';
}

/** Problems from a coded error body `{error, message, line?, column?}`. */
export function problemsFromCodedError(body: { error?: string; message?: string; line?: number; column?: number }): Problem[] {
  const message = body.message ?? body.error ?? 'The template could not be rendered.';
  return [{ pane: paneOfMessage(message), message, ...positionOf(body) }];
}

/** Problems from any error body the API may send. */
export function problemsFromBody(body: unknown): Problem[] {
  if (typeof body !== 'object' || body === null) return [];
  const b = body as { detail?: unknown; error?: string; message?: string; line?: number; column?: number };
  if (Array.isArray(b.detail)) return problemsFromValidation(b.detail as ValidationIssue[]);
  if (typeof b.error === 'string') return problemsFromCodedError(b);
  return [];
}

/** One line for a person: "HTML, line 3: Template syntax error: …". */
export function describeProblem(problem: Problem): string {
  const where = problem.line ? `${PANE_LABELS[problem.pane]}, line ${problem.line}` : PANE_LABELS[problem.pane];
  return `${where}: ${problem.message}`;
}
