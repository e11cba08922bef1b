/**
 * How the studio's own requests are told apart (issue 50 point 9): its one API client
 * (studio/src/api/client.ts) sends this header on every call, and a read so marked spends the studio's
 * budget instead of the account's rate limit (http/auth.ts). Anyone holding the key can send it too, so
 * it is a claim, not a secret: what the claim buys is bounded (docs/rate-limits.md "The studio").
 */
export const STUDIO_CLIENT_HEADER = 'x-pressroom-client';
export const STUDIO_CLIENT = 'studio';
