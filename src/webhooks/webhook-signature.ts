/**
 * Webhook signatures. Both are HMAC-SHA256 keyed with the UTF-8 bytes of the customer's
 * `webhook_secret` (not base64-decoded: Standard Webhooks libraries expect a `whsec_` base64 key, so
 * docs/webhooks.md shows verification code for our keying):
 * - `X-Service-Signature`: lowercase hex of HMAC(secret, raw body bytes);
 * - `webhook-signature`: `v1,` + base64 of HMAC(secret, `${webhook-id}.${webhook-timestamp}.${body}`),
 *   which binds the time so a receiver can refuse replays.
 */
import { hmacSha256 } from '../shared/crypto.js';

/** Value of `X-Service-Signature` for a body. */
export function serviceSignature(secret: string, body: string): string {
  return hmacSha256(Buffer.from(secret, 'utf8'), Buffer.from(body, 'utf8')).toString('hex');
}

/** Value of `webhook-signature` (Standard Webhooks, version 1). */
export function standardSignature(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${hmacSha256(Buffer.from(secret, 'utf8'), Buffer.from(`${id}.${timestampSeconds}.${body}`, 'utf8')).toString('base64')}`;
}

/** Every header of one delivery attempt; the signature headers only when there is a secret. */
export function webhookHeaders(input: {
  id: string;
  timestampSeconds: number;
  body: string;
  secret: string | null;
}): Record<string, string> {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'user-agent': 'Pressroom-Webhooks/1',
    'webhook-id': input.id,
    'webhook-timestamp': String(input.timestampSeconds),
  };
  if (input.secret !== null) {
    headers['webhook-signature'] = standardSignature(input.secret, input.id, input.timestampSeconds, input.body);
    headers['x-service-signature'] = serviceSignature(input.secret, input.body);
  }
  return headers;
}
