/**
 * Files clients send inside JSON as base64 (a PDF, an e-invoice, a PKCS#12): what counts as base64, and
 * what it decodes to, checked before anything is decoded.
 */

/** Standard or URL-safe alphabet, padding optional (whitespace is removed by the caller first). */
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** Whether `compact` (no whitespace) is base64 that decodes to at least one byte. */
export function isBase64(compact: string): boolean {
  return compact !== '' && BASE64.test(compact) && compact.length % 4 !== 1;
}

/** The bytes `compact` decodes to at most: a bound checked before the buffer is made. */
export function decodedLength(compact: string): number {
  return Math.floor((compact.length * 3) / 4);
}
