/**
 * A refused batch (4xx) said plainly: the API's `{detail: [{loc, msg}]}` with each fault's row named as
 * the user knows it (its row number and line in their own file, not the rewritten upload's), or its
 * `{error, message}`.
 */
import { ApiError } from './batch-client.js';
import { describeRow } from './rows/row-collector.js';
import type { PreparedRows, SentRow } from './rows/rows-file.js';

/** Most faults listed (the API names at most 20). */
const MAX_FAULTS = 50;

/** The lines that explain `error` to the user. */
export function refusalLines(error: ApiError, rows: PreparedRows, sourceName: string): string[] {
  const lines = [`the service refused the batch (HTTP ${error.status}):`];
  const body = error.body as { detail?: unknown; error?: unknown; message?: unknown } | string | null;
  if (body && typeof body === 'object' && Array.isArray(body.detail)) {
    for (const fault of body.detail.slice(0, MAX_FAULTS)) lines.push(`  ${faultLine(fault, rows, sourceName)}`);
    if (body.detail.length > MAX_FAULTS) lines.push(`  … and ${body.detail.length - MAX_FAULTS} more`);
  } else if (body && typeof body === 'object' && typeof body.message === 'string') {
    lines.push(`  ${typeof body.error === 'string' ? `${body.error}: ` : ''}${body.message}`);
  } else {
    lines.push(
      `  ${String(typeof body === 'string' ? body : JSON.stringify(body)).slice(0, 500) || '(no explanation)'}`,
    );
  }
  return lines;
}

function faultLine(fault: unknown, rows: PreparedRows, sourceName: string): string {
  const { loc, msg } = (fault ?? {}) as { loc?: unknown; msg?: unknown };
  const message = typeof msg === 'string' ? msg : JSON.stringify(fault);
  if (!Array.isArray(loc)) return message;
  const located = locateRow(loc, rows);
  if (!located) return `${loc.join('.')}: ${message}`;
  const field = located.rest.filter((part) => part !== 'data' && part !== 'column').join('.');
  return `${describeRow(located.row, sourceName)}${field ? `, ${field}` : ''}: ${message}`;
}

/** The row a `loc` points at (`…, "items", 17, …` or `…, "line", 5, …`) and the loc after it. */
function locateRow(loc: unknown[], rows: PreparedRows): { row: SentRow; rest: unknown[] } | undefined {
  for (let i = 0; i + 1 < loc.length; i++) {
    const at = loc[i + 1];
    if (typeof at !== 'number') continue;
    const row = loc[i] === 'items' ? rows.sent[at] : loc[i] === 'line' ? rows.rowAtUploadLine(at) : undefined;
    if (row) return { row, rest: loc.slice(i + 2) };
  }
  return undefined;
}
