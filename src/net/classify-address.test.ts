import { describe, expect, it } from 'vitest';
import { classifyAddress, isIpLiteral, type AddressCategory } from './classify-address.js';

const cases: Array<[input: string, category: AddressCategory, embeddedIPv4?: string]> = [
  // IPv4, plain
  ['8.8.8.8', 'public'],
  ['93.184.216.34', 'public'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['10.0.0.1', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['172.32.0.1', 'public'],
  ['192.168.1.1', 'private'],
  ['169.254.169.254', 'link-local'],
  ['100.64.0.1', 'cgnat'],
  ['100.127.255.255', 'cgnat'],
  ['100.128.0.1', 'public'],
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', 'unspecified'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['255.255.255.255', 'broadcast'],
  ['240.0.0.1', 'reserved'],
  ['192.0.0.170', 'reserved'],
  ['198.18.0.1', 'reserved'],
  ['192.0.2.1', 'documentation'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.9', 'documentation'],
  // IPv4, spellings a client would still dial as 127.0.0.1
  ['2130706433', 'loopback'],
  ['0177.0.0.1', 'loopback'],
  ['0x7f.1', 'loopback'],
  ['0x7f000001', 'loopback'],
  ['127.1', 'loopback'],
  ['017700000001', 'loopback'],
  ['0xa9.0xfe.0xa9.0xfe', 'link-local'],
  // IPv6
  ['2606:4700:4700::1111', 'public'],
  ['[2606:4700:4700::1111]', 'public'],
  ['::1', 'loopback'],
  ['[::1]', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['::', 'unspecified'],
  ['fc00::1', 'private'],
  ['fd12:3456::1', 'private'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['fec0::1', 'private'],
  ['ff02::1', 'multicast'],
  ['2001:db8::1', 'documentation'],
  ['100::1', 'reserved'],
  ['5f00::1', 'reserved'],
  ['4000::1', 'reserved'],
  ['64:ff9b:1::a00:1', 'private'],
  // IPv4 inside IPv6
  ['::ffff:127.0.0.1', 'loopback', '127.0.0.1'],
  ['::ffff:7f00:1', 'loopback', '127.0.0.1'],
  ['[::ffff:7f00:1]', 'loopback', '127.0.0.1'],
  ['::ffff:169.254.169.254', 'link-local', '169.254.169.254'],
  ['::ffff:8.8.8.8', 'public', '8.8.8.8'],
  ['::127.0.0.1', 'loopback', '127.0.0.1'],
  ['::7f00:1', 'loopback', '127.0.0.1'],
  ['::8.8.8.8', 'reserved', '8.8.8.8'],
  ['::ffff:0:a00:1', 'private', '10.0.0.1'],
  ['64:ff9b::10.0.0.1', 'private', '10.0.0.1'],
  ['64:ff9b::7f00:1', 'loopback', '127.0.0.1'],
  ['64:ff9b::8.8.8.8', 'public', '8.8.8.8'],
  ['2002:7f00:1::', 'loopback', '127.0.0.1'],
  ['2002:c0a8:101::1', 'private', '192.168.1.1'],
  ['2002:808:808::1', 'public', '8.8.8.8'],
  ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback', '127.0.0.1'],
  ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'reserved', '8.8.8.8'],
  // not addresses
  ['example.com', 'invalid'],
  ['localhost', 'invalid'],
  ['', 'invalid'],
  ['1.2.3.4.5', 'invalid'],
  ['::g', 'invalid'],
];

describe('classifyAddress', () => {
  it.each(cases)('%s → %s', (input, category, embeddedIPv4) => {
    const verdict = classifyAddress(input);
    expect(verdict.category).toBe(category);
    expect(verdict.isPublic).toBe(category === 'public');
    if (embeddedIPv4 !== undefined) expect(verdict.embeddedIPv4).toBe(embeddedIPv4);
  });

  it('canonicalises odd spellings to the address a client would dial', () => {
    expect(classifyAddress('0x7f.1').address).toBe('127.0.0.1');
    expect(classifyAddress('[::ffff:127.0.0.1]').address).toBe('::ffff:7f00:1');
  });

  it('tells IP literals from names', () => {
    expect(isIpLiteral('[::1]')).toBe(true);
    expect(isIpLiteral('2130706433')).toBe(true);
    expect(isIpLiteral('example.com')).toBe(false);
    expect(isIpLiteral('1e100.net')).toBe(false);
  });
});
