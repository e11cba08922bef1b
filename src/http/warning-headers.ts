/**
 * Warnings on binary answers (issue 13): `X-Pressroom-Warnings: <count>` and
 * `X-Pressroom-Warning-Details: <JSON array>`, ASCII-escaped (header-safe) and shortened to at most
 * WARNING_DETAILS_MAX_CHARS (clients cap response headers: undici at 16 KiB for all of them), the
 * last entry then saying how many were left out. The image API's `x-warnings` (a JSON array of
 * strings, TemplateFox's shape) is built by the same function.
 */
import type { FastifyReply } from 'fastify';
import type { DocumentWarning } from '../shared/document-warnings.js';

export const WARNING_DETAILS_MAX_CHARS = 8192;

/** `list` as a JSON array in ASCII, shortened to `maxChars` with `more(n)` standing for the rest. */
export function jsonListHeader<T>(list: T[], maxChars: number, more: (left: number) => T): string {
  const ascii = (items: T[]) =>
    JSON.stringify(items).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  let shown = list.length;
  let value = ascii(list);
  while (value.length > maxChars && shown > 0) {
    shown -= 1;
    value = ascii([...list.slice(0, shown), more(list.length - shown)]);
  }
  return value;
}

/** Sets the two warning headers when there are warnings. */
export function setWarningHeaders(reply: FastifyReply, warnings: DocumentWarning[] | undefined): FastifyReply {
  if (!warnings || warnings.length === 0) return reply;
  const details = jsonListHeader<DocumentWarning>(warnings, WARNING_DETAILS_MAX_CHARS, (left) => ({
    code: 'MORE_WARNINGS',
    message: `…and ${left} more`,
  }));
  return reply.header('x-pressroom-warnings', String(warnings.length)).header('x-pressroom-warning-details', details);
}

/** The JSON answer's `warnings`, present only when there are some. */
export function warningsField(warnings: DocumentWarning[] | undefined): { warnings?: DocumentWarning[] } {
  return warnings && warnings.length > 0 ? { warnings } : {};
}
