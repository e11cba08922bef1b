/**
 * Signed, expiring download links for files kept in local storage (S3 storage presigns instead).
 * The signature binds the file, the download name and the expiry, so none can be changed without
 * the key; it is HMAC-SHA256 under a key derived for this purpose only.
 */
import { deriveKey, hmacSha256, safeEqual } from '../shared/crypto.js';

/** What a link grants: one file, under one name, until one moment. */
export interface DownloadGrant {
  readonly fileId: string;
  readonly filename: string;
  readonly expiresAt: Date;
}

/** The query parameters that carry a grant's proof. */
export interface DownloadLinkParams {
  /** Expiry as Unix seconds. */
  readonly expires: string;
  /** base64url HMAC-SHA256. */
  readonly signature: string;
}

/** Outcome of verifying a link; the route maps these to LINK_EXPIRED / LINK_INVALID. */
export type DownloadLinkVerdict = 'ok' | 'expired' | 'invalid';

/** The key for download links, derived from the master secret (`PRESSROOM_SECRET_KEY`). */
export function downloadLinkKey(secretKey: string): Buffer {
  return deriveKey(secretKey, 'download-links');
}

/** Signs a grant; append the result to the file URL as query parameters. */
export function signDownload(grant: DownloadGrant, key: Buffer): DownloadLinkParams {
  const expires = String(Math.floor(grant.expiresAt.getTime() / 1000));
  return { expires, signature: signature(grant.fileId, grant.filename, expires, key) };
}

/**
 * Checks a link. The signature is checked first (in constant time) so a link whose expiry was
 * edited is `invalid`, not `expired`: only a genuine but old link is reported as expired.
 */
export function verifyDownload(
  link: { fileId: string; filename: string; expires: string; signature: string },
  key: Buffer,
  now: Date = new Date(),
): DownloadLinkVerdict {
  if (!/^\d{1,12}$/.test(link.expires)) return 'invalid';
  const expected = signature(link.fileId, link.filename, link.expires, key);
  if (!safeEqual(expected, link.signature)) return 'invalid';
  return Number(link.expires) * 1000 <= now.getTime() ? 'expired' : 'ok';
}

function signature(fileId: string, filename: string, expires: string, key: Buffer): string {
  // JSON framing keeps field boundaries unambiguous whatever the fields contain.
  return hmacSha256(key, `pressroom-download-v1\n${JSON.stringify([fileId, filename, expires])}`).toString('base64url');
}
