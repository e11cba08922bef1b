/**
 * The one template check, shared by saving and rendering: a part is valid when `compileTemplate`
 * takes it (it parses, and names only filters and tests the language has). Compiling never runs
 * template code, so it is safe in the server process; evaluation happens only in the sandbox.
 */
import { AppError, type ValidationIssue } from '../shared/errors.js';
import { compileTemplate } from './compiler.js';

/** The parts of a template, as error bodies name them (`part`). */
export type TemplatePart = 'html' | 'css' | 'header' | 'footer';

export interface TemplateProblem {
  part: TemplatePart;
  message: string;
  line?: number;
  column?: number;
}

/** The problem of one part's source, or null when it compiles. */
export function findTemplateProblem(part: TemplatePart, source: string): TemplateProblem | null {
  try {
    compileTemplate(source, part);
    return null;
  } catch (error) {
    if (!(error instanceof AppError) || error.code !== 'TEMPLATE_SYNTAX_ERROR') throw error;
    const { line, column } = error.details ?? {};
    return {
      part,
      message: error.message,
      ...(typeof line === 'number' ? { line } : {}),
      ...(typeof column === 'number' ? { column } : {}),
    };
  }
}

/** 422 issues for each part that does not compile: `loc` names the field, `ctx` the part, line and column. */
export function syntaxIssues(
  parts: { loc: (string | number)[]; part: TemplatePart; source: string | null | undefined }[],
): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  for (const { loc, part, source } of parts) {
    if (!source) continue;
    const problem = findTemplateProblem(part, source);
    if (problem) {
      issues.push({
        loc,
        msg: problem.message,
        type: 'template_syntax',
        ctx: {
          part,
          ...(problem.line === undefined ? {} : { line: problem.line }),
          ...(problem.column === undefined ? {} : { column: problem.column }),
        },
      });
    }
  }
  return issues;
}
