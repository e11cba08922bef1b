/**
 * `Content-Disposition` for downloads whose filename came from a customer. The header must never
 * let that name inject header syntax (quotes, CR/LF, `;`) or a path, so the quoted `filename=` is
 * reduced to the spec's filename alphabet and the exact name travels only percent-encoded in
 * `filename*` (RFC 6266 / RFC 8187), which has no syntax to break out of.
 */

const UNSAFE_IN_FILENAME = /[^A-Za-z0-9_.-]/g;
// Controls, path separators and quotes have no business in a download name, even encoded.
const NEVER_IN_FILENAME = /[\u0000-\u001f\u007f"/\\]/g;
const MAX_FILENAME_LENGTH = 200;

/**
 * Reduces a name to letters, digits, `_`, `-` and `.` (the SPEC's filename pattern), without
 * leading dots (no hidden files, no `..`), at most 200 characters; `fallback` when nothing is left.
 */
export function safeFilename(name: string, fallback = 'document'): string {
  const cleaned = name
    .normalize('NFC')
    .replace(UNSAFE_IN_FILENAME, '_')
    .replace(/^\.+/, '')
    .slice(0, MAX_FILENAME_LENGTH);
  return cleaned === '' || /^_+$/.test(cleaned) ? fallback : cleaned;
}

/** `attachment; filename="…"; filename*=UTF-8''…` for a customer-supplied filename. */
export function attachmentDisposition(filename: string): string {
  const ascii = safeFilename(filename);
  const exact =
    filename.normalize('NFC').replace(NEVER_IN_FILENAME, '').replace(/^\.+/, '').slice(0, MAX_FILENAME_LENGTH) || ascii;
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeRfc8187(exact)}`;
}

/** Percent-encodes everything outside RFC 8187's attr-char set. */
function encodeRfc8187(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
