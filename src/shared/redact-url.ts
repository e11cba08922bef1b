/**
 * Secrets that travel inside URLs: query values that are credentials (our signed download links,
 * presigned S3 URLs, OAuth-style tokens in webhook URLs) and the password in `scheme://user:pass@host`.
 * `redactUrlSecrets` replaces them with `[redacted]` wherever they appear in a text — a whole log
 * line, a message — and keeps the rest of the URL (path, other parameters) for the reader.
 */

/** What stands in for a removed secret. */
export const REDACTED = '[redacted]';

/** Query parameters whose values are credentials (matched without regard to case). */
export const SECRET_QUERY_PARAMETERS = [
  'signature',
  'sig',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'api_key',
  'apikey',
  'key',
  'password',
  'secret',
  'client_secret',
  'x-amz-signature',
  'x-amz-credential',
  'x-amz-security-token',
  'x-goog-signature',
  'x-goog-credential',
] as const;

// A value ends where the URL or the JSON string around it ends: `&`, `#`, whitespace, a quote, a
// backslash (a JSON escape) or an angle bracket. `;` also starts a parameter, as in `&amp;signature=`.
const SECRET_QUERY_VALUE = new RegExp(`([?&;](?:${SECRET_QUERY_PARAMETERS.join('|')})=)[^&#\\s"'\\\\<>]+`, 'gi');
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s:@/?#"'\\]*:)[^\s@/?#"'\\]+@/gi;

/** `text` with every credential query value and URL password replaced by `[redacted]`. */
export function redactUrlSecrets(text: string): string {
  return text.replace(SECRET_QUERY_VALUE, `$1${REDACTED}`).replace(URL_PASSWORD, `$1${REDACTED}@`);
}
