/**
 * Syntax checks with Nunjucks' own parser. Parsing never runs template code, so it is safe in the
 * server process; evaluation happens only in the rendering sandbox.
 */
import { parseTemplate } from './nunjucks-parser.js';
import type { ValidationIssue } from '../shared/errors.js';

export interface SyntaxProblem {
  message: string;
  line?: number;
  column?: number;
}

/** Returns the first syntax problem of `source`, or null when it parses. */
export function findSyntaxProblem(source: string): SyntaxProblem | null {
  try {
    parseTemplate(source);
    return null;
  } catch (error) {
    if (error instanceof RangeError) return { message: 'the template is nested too deeply to parse' };
    const e = error as { message?: string; lineno?: number; colno?: number };
    const message = String(e.message ?? 'syntax error').replace(/^\(unknown path\)\s*/, '').split('\n')[0] ?? 'syntax error';
    return { message, line: e.lineno, column: e.colno };
  }
}

/** 422 issues for each template part that does not parse, with the line in the message. */
export function syntaxIssues(parts: { loc: (string | number)[]; source: string | null | undefined }[]): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const part of parts) {
    if (!part.source) continue;
    const problem = findSyntaxProblem(part.source);
    if (problem) {
      const where = problem.line ? ` (line ${problem.line}${problem.column ? `, column ${problem.column}` : ''})` : '';
      issues.push({ loc: part.loc, msg: `Template syntax error: ${problem.message}${where}`, type: 'template_syntax', ...(problem.line ? { ctx: { line: problem.line, column: problem.column } } : {}) });
    }
  }
  return issues;
}
