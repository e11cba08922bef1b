import { describe, expect, it } from 'vitest';
import { OutboundBlockedError } from './outbound-blocked-error.js';
import { resolveCheckedAddress, type ResolvedAddress } from './resolve-checked-address.js';

const answering =
  (...addresses: string[]) =>
  async (): Promise<ResolvedAddress[]> =>
    addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
const strict = (resolve: () => Promise<ResolvedAddress[]>) => ({ allowPrivateNetworks: false, resolve });

describe('resolveCheckedAddress', () => {
  it('returns a checked public address, preferring IPv4', async () => {
    await expect(
      resolveCheckedAddress('hooks.example.com', strict(answering('2606:4700::1', '93.184.216.34'))),
    ).resolves.toEqual({
      address: '93.184.216.34',
      family: 4,
    });
    await expect(resolveCheckedAddress('v6only.example.com', strict(answering('2606:4700::1')))).resolves.toEqual({
      address: '2606:4700::1',
      family: 6,
    });
  });

  it('refuses the host when any answer is private, naming the address only in the reason', async () => {
    const error = await resolveCheckedAddress(
      'mixed.example.com',
      strict(answering('93.184.216.34', '10.0.0.7')),
    ).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutboundBlockedError);
    expect((error as OutboundBlockedError).reason).toMatch(/^mixed\.example\.com resolved to 10\.0\.0\.7 is private/);
    expect((error as OutboundBlockedError).message).not.toContain('10.0.0.7');
    expect((error as OutboundBlockedError).details).toEqual({
      host: 'mixed.example.com',
      address: '10.0.0.7',
      category: 'private',
    });
  });

  it('checks literals without asking DNS, brackets and zone ids included', async () => {
    const neverCalled = async (): Promise<ResolvedAddress[]> => {
      throw new Error('DNS must not be asked about a literal');
    };
    await expect(resolveCheckedAddress('[::1]', strict(neverCalled))).rejects.toBeInstanceOf(OutboundBlockedError);
    await expect(resolveCheckedAddress('169.254.169.254', strict(neverCalled))).rejects.toBeInstanceOf(
      OutboundBlockedError,
    );
    await expect(
      resolveCheckedAddress('fe80::1%lo', { allowPrivateNetworks: true, resolve: neverCalled }),
    ).resolves.toEqual({ address: 'fe80::1%lo', family: 6 });
  });

  it('treats a resolver answer that is not an IP as a refusal', async () => {
    await expect(resolveCheckedAddress('odd.example.com', strict(answering('not-an-ip')))).rejects.toBeInstanceOf(
      OutboundBlockedError,
    );
  });

  it('reports DNS trouble as DNS trouble, not as a refusal', async () => {
    await expect(resolveCheckedAddress('empty.example.com', strict(answering()))).rejects.toMatchObject({
      code: 'ENOTFOUND',
    });
    const hanging = {
      allowPrivateNetworks: false,
      resolveTimeoutMs: 50,
      resolve: () => new Promise<ResolvedAddress[]>(() => {}),
    };
    await expect(resolveCheckedAddress('slow.example.com', hanging)).rejects.toMatchObject({ code: 'ETIMEOUT' });
  });

  it('lets private answers through when private networks are allowed', async () => {
    await expect(
      resolveCheckedAddress('minio.internal', { allowPrivateNetworks: true, resolve: answering('10.0.0.7') }),
    ).resolves.toEqual({
      address: '10.0.0.7',
      family: 4,
    });
  });
});
