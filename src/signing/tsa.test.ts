/**
 * The time-stamp authority through the outbound guard, against a real OpenSSL TSA on loopback: allowed
 * only when private networks are, refused at the URL check otherwise, and refused again at connect time
 * by the guarded dispatcher (a name that resolves to loopback cannot slip past the URL check).
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuardedDispatcher } from '../net/guarded-dispatcher.js';
import { isAppError, ValidationError } from '../shared/errors.js';
import { startTsaServer, type TsaServer } from '../../test/support/documents/signing-kit.js';
import { checkTsaUrl, guardedTimestampAuthority } from './tsa.js';

describe('guarded time-stamp authority', () => {
  let tsa: TsaServer;
  const open = createGuardedDispatcher({ allowPrivateNetworks: true });
  const guarded = createGuardedDispatcher({ allowPrivateNetworks: false });
  const digest = createHash('sha256').update('a signature value').digest();

  beforeAll(async () => {
    tsa = await startTsaServer();
  });
  afterAll(async () => {
    await Promise.all([open.close(), guarded.close()]);
    await tsa?.close();
  });

  it('returns a token for the digest sent when private networks are allowed', async () => {
    const token = await guardedTimestampAuthority(new URL(tsa.url), {
      dispatcher: open,
      allowPrivateNetworks: true,
    }).timestamp(digest, 'SHA-256');
    expect(Buffer.from(token).includes(digest)).toBe(true);
  });

  it('refuses a loopback or plain-http TSA URL when they are not allowed, before any request', () => {
    expect(() => checkTsaUrl(tsa.url, { allowPrivateNetworks: false }, ['body', 'tsa_url'])).toThrow(ValidationError);
    expect(() =>
      checkTsaUrl('http://tsa.example.com/tsr', { allowPrivateNetworks: false }, ['body', 'tsa_url']),
    ).toThrow(ValidationError);
    expect(checkTsaUrl('https://tsa.example.com/tsr', { allowPrivateNetworks: false }, ['body', 'tsa_url']).host).toBe(
      'tsa.example.com',
    );
  });

  it('is stopped at connect time by the guarded dispatcher: TSA_FAILED, and the TSA never asked', async () => {
    const asked = tsa.requests;
    const error = await guardedTimestampAuthority(new URL(tsa.url.replace('127.0.0.1', 'localhost')), {
      dispatcher: guarded,
      allowPrivateNetworks: false,
    })
      .timestamp(digest, 'SHA-256')
      .catch((e: unknown) => e);
    expect(isAppError(error, 'TSA_FAILED')).toBe(true);
    expect((error as Error).message).toContain('its address is not allowed');
    expect(tsa.requests).toBe(asked);
  });
});
