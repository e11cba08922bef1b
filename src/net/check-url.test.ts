import { describe, expect, it } from 'vitest';
import { checkUrl, type UrlRefusal } from './check-url.js';

const strict = { allowPrivateNetworks: false, requireHttps: true };
const relaxed = { allowPrivateNetworks: true, requireHttps: true };

const refused: Array<[url: string, reason: UrlRefusal]> = [
  ['not a url', 'invalid-url'],
  ['/relative/path', 'invalid-url'],
  ['ftp://files.example.com/x', 'unsupported-protocol'],
  ['file:///etc/passwd', 'unsupported-protocol'],
  ['javascript:alert(1)', 'unsupported-protocol'],
  ['http://hooks.example.com/x', 'https-required'],
  ['https://user:pass@hooks.example.com/x', 'credentials-in-url'],
  ['https://user@hooks.example.com/x', 'credentials-in-url'],
  ['https://127.0.0.1/x', 'private-address'],
  ['https://2130706433/x', 'private-address'],
  ['https://0177.0.0.1/x', 'private-address'],
  ['https://0x7f.1/x', 'private-address'],
  ['https://127.1/x', 'private-address'],
  ['https://0/x', 'private-address'],
  ['https://10.1.2.3:8443/x', 'private-address'],
  ['https://169.254.169.254/latest/meta-data/', 'private-address'],
  ['https://[::1]/x', 'private-address'],
  ['https://[::ffff:127.0.0.1]/x', 'private-address'],
  ['https://[::ffff:7f00:1]/x', 'private-address'],
  ['https://[fd00::1]/x', 'private-address'],
  ['https://[fe80::1]/x', 'private-address'],
  ['https://[64:ff9b::a9fe:a9fe]/x', 'private-address'],
  ['https://localhost/x', 'private-address'],
  ['https://LOCALHOST./x', 'private-address'],
  ['https://api.localhost/x', 'private-address'],
];

const accepted = [
  'https://hooks.example.com/pressroom',
  'https://hooks.example.com:8443/a?b=c',
  'https://8.8.8.8/x',
  'https://[2606:4700:4700::1111]/x',
  'https://localhost.example.com/x',
];

describe('checkUrl', () => {
  it.each(refused)('refuses %s (%s)', (url, reason) => {
    const result = checkUrl(url, strict);
    expect(result.ok).toBe(false);
    if (!result.ok) {
      expect(result.reason).toBe(reason);
      // The customer-facing message never echoes the address back.
      expect(result.message).not.toMatch(/127|169\.254|::1|localhost/);
    }
  });

  it.each(accepted)('accepts %s', (url) => {
    expect(checkUrl(url, strict).ok).toBe(true);
  });

  it('with allowPrivateNetworks accepts loopback, and plain http so tests can use local receivers', () => {
    expect(checkUrl('http://127.0.0.1:9000/hook', relaxed).ok).toBe(true);
    expect(checkUrl('https://localhost/x', relaxed).ok).toBe(true);
    expect(checkUrl('http://[::1]:9000/', relaxed).ok).toBe(true);
  });

  it('with allowPrivateNetworks still refuses credentials and other schemes', () => {
    expect(checkUrl('http://a:b@127.0.0.1/', relaxed)).toMatchObject({ ok: false, reason: 'credentials-in-url' });
    expect(checkUrl('gopher://127.0.0.1/', relaxed)).toMatchObject({ ok: false, reason: 'unsupported-protocol' });
  });

  it('accepts plain http when https is not required', () => {
    expect(checkUrl('http://hooks.example.com/', { allowPrivateNetworks: false, requireHttps: false }).ok).toBe(true);
    expect(checkUrl('http://127.0.0.1/', { allowPrivateNetworks: false, requireHttps: false }).ok).toBe(false);
  });

  it('explains the refusal for the log', () => {
    const result = checkUrl('https://0x7f.1/', strict);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.detail).toBe('literal 127.0.0.1 is loopback');
  });
});
