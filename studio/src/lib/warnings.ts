/**
 * Document warnings (issue 13): what a document needed and did not get — a remote image that was
 * blocked or timed out, a missing asset, a variable the data lacks. JSON answers carry them as
 * `warnings: [{code, message, url?}]`; binary answers (and the preview) as the headers
 * `X-Pressroom-Warnings: <count>` and `X-Pressroom-Warning-Details: <JSON array, ASCII-escaped>`.
 * Pure, no DOM: a server without warnings simply yields none.
 */

/** One warning, as src/shared/document-warnings.ts defines it. */
export interface DocumentWarning {
  code: string;
  message: string;
  url?: string;
}

const isWarning = (value: unknown): value is DocumentWarning =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as DocumentWarning).code === 'string' &&
  typeof (value as DocumentWarning).message === 'string';

/** The warnings of a JSON list (drops anything that is not one). */
export function readWarnings(value: unknown): DocumentWarning[] {
  return Array.isArray(value)
    ? value
        .filter(isWarning)
        .map((w) => ({ code: w.code, message: w.message, ...(typeof w.url === 'string' ? { url: w.url } : {}) }))
    : [];
}

/** The warnings of a binary answer's headers; `count` is the header's number, or the details' length. */
export function parseWarningHeaders(header: (name: string) => string | null): {
  warnings: DocumentWarning[];
  count: number;
} {
  let warnings: DocumentWarning[] = [];
  const details = header('x-pressroom-warning-details');
  if (details) {
    try {
      warnings = readWarnings(JSON.parse(details));
    } catch {
      warnings = [];
    }
  }
  const count = Number(header('x-pressroom-warnings'));
  return { warnings, count: Number.isInteger(count) && count > warnings.length ? count : warnings.length };
}
