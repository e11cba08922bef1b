/**
 * Credential formats.
 * - API key: `pr_` + 48 characters of [A-Za-z0-9] (~285 bits). Its first 12 characters are the public
 *   lookup prefix; the database keeps only the prefix and the SHA-256 of the whole key.
 * - Access token: a JWT (HS256 only, `exp` required) signed with a key derived from the master secret.
 *   Its `iat` has millisecond precision (a NumericDate may have a fraction, RFC 7519 2), so a token
 *   issued in the same second as a revocation, but after it, is not mistaken for an older one.
 */
import { SignJWT, errors as joseErrors, jwtVerify } from 'jose';
import { randomId } from '../shared/ids.js';
import { deriveKey } from '../shared/crypto.js';

export const API_KEY_PREFIX_LENGTH = 12;
const API_KEY_PATTERN = /^pr_[A-Za-z0-9]{48}$/;
const TOKEN_ISSUER = 'pressroom';
const TOKEN_AUDIENCE = 'pressroom-api';
const TOKEN_ALGORITHM = 'HS256';
/** How long an access token may live: a minute to a year. */
export const ACCESS_TOKEN_TTL_SECONDS = { min: 60, max: 31_536_000 } as const;

export function generateApiKey(): string {
  return `pr_${randomId(48)}`;
}

export function isApiKeyShaped(value: string): boolean {
  return API_KEY_PATTERN.test(value);
}

export function apiKeyPrefix(apiKey: string): string {
  return apiKey.slice(0, API_KEY_PREFIX_LENGTH);
}

/** What a valid access token says. */
export interface VerifiedAccessToken {
  accountId: string;
  /** When the token was issued (epoch ms); 0 when it has no `iat`, so any revocation stops it. */
  issuedAtMs: number;
}

export interface AccessTokenSigner {
  /** A token for the account, issued now, or at `notBeforeMs` when that is later (see accounts.ts). */
  issue(accountId: string, ttlSeconds: number, notBeforeMs?: number): Promise<string>;
  /** Who the token was issued to and when, or null when the token is invalid or expired. */
  verify(token: string): Promise<VerifiedAccessToken | null>;
}

export function createAccessTokenSigner(secretKey: string): AccessTokenSigner {
  const key = deriveKey(secretKey, 'access-tokens');
  return {
    async issue(accountId, ttlSeconds, notBeforeMs) {
      const nowMs = Math.max(Date.now(), notBeforeMs ?? 0);
      return new SignJWT({})
        .setProtectedHeader({ alg: TOKEN_ALGORITHM, typ: 'JWT' })
        .setSubject(accountId)
        .setIssuer(TOKEN_ISSUER)
        .setAudience(TOKEN_AUDIENCE)
        .setIssuedAt(nowMs / 1000)
        .setJti(randomId(16))
        .setExpirationTime(Math.floor(nowMs / 1000) + ttlSeconds)
        .sign(key);
    },
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, key, {
          algorithms: [TOKEN_ALGORITHM],
          issuer: TOKEN_ISSUER,
          audience: TOKEN_AUDIENCE,
          requiredClaims: ['exp', 'sub'],
        });
        if (typeof payload.sub !== 'string') return null;
        return {
          accountId: payload.sub,
          issuedAtMs: typeof payload.iat === 'number' ? Math.round(payload.iat * 1000) : 0,
        };
      } catch (error) {
        if (error instanceof joseErrors.JOSEError) return null;
        throw error;
      }
    },
  };
}
