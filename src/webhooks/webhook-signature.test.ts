import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { serviceSignature, standardSignature, webhookHeaders } from './webhook-signature.js';

// Reference values computed independently of the module, the way a receiver would.
const secret = 'whsec-like but plain: ünïcode ok';
const body =
  '{"event":"pdf.completed","job_id":"j1","status":"completed","result":{"url":"https://x/y.pdf","filename":"y.pdf"}}';

describe('webhook signatures', () => {
  it('X-Service-Signature is lowercase hex HMAC-SHA256 of the raw body keyed with the UTF-8 secret', () => {
    const reference = createHmac('sha256', Buffer.from(secret, 'utf8')).update(Buffer.from(body, 'utf8')).digest('hex');
    expect(serviceSignature(secret, body)).toBe(reference);
    expect(serviceSignature(secret, body)).toMatch(/^[0-9a-f]{64}$/);
  });

  it('webhook-signature is v1,base64 HMAC of id.timestamp.body (Standard Webhooks)', () => {
    const reference = createHmac('sha256', Buffer.from(secret, 'utf8'))
      .update(`msg_1.1700000000.${body}`)
      .digest('base64');
    expect(standardSignature(secret, 'msg_1', 1_700_000_000, body)).toBe(`v1,${reference}`);
  });

  it('sends the id and timestamp always, the signatures only with a secret', () => {
    const unsigned = webhookHeaders({ id: 'msg_1', timestampSeconds: 5, body, secret: null });
    expect(unsigned).toEqual({
      'content-type': 'application/json',
      'user-agent': 'Pressroom-Webhooks/1',
      'webhook-id': 'msg_1',
      'webhook-timestamp': '5',
    });
    const signed = webhookHeaders({ id: 'msg_1', timestampSeconds: 5, body, secret });
    expect(Object.keys(signed).sort()).toEqual([
      'content-type',
      'user-agent',
      'webhook-id',
      'webhook-signature',
      'webhook-timestamp',
      'x-service-signature',
    ]);
  });
});
