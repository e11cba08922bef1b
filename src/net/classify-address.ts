/**
 * Decides whether an IP address is a public destination. Customer-supplied URLs (webhooks, S3
 * endpoints) may only reach `public` addresses unless private networks are explicitly allowed.
 *
 * Parsing is left to ipaddr.js and, for odd IPv4 spellings (`2130706433`, `0177.0.0.1`, `0x7f.1`,
 * `127.1`), to the WHATWG URL parser: that is the parser undici and the AWS SDK use, so we classify
 * exactly the address a client would connect to. The range table is ours, written out below, so a
 * reviewer can read every decision without opening the library.
 *
 * IPv6 is an allow-list: only global unicast (2000::/3) can be public. Forms that embed an IPv4
 * address (mapped, compatible, SIIT, NAT64, 6to4) are judged by the embedded address, so
 * `::ffff:127.0.0.1` is loopback, not "some IPv6 address".
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Why an address is or is not a public destination. */
export type AddressCategory =
  | 'public'
  | 'loopback'
  | 'private'
  | 'link-local'
  | 'cgnat'
  | 'unspecified'
  | 'multicast'
  | 'broadcast'
  | 'documentation'
  | 'reserved'
  | 'invalid';

/** How an IPv6 address carries an IPv4 address, when it does. */
export type IPv4Embedding = 'ipv4-mapped' | 'ipv4-compatible' | 'ipv4-translated' | 'nat64' | '6to4' | 'teredo';

/** The verdict on one address. */
export interface AddressClassification {
  /** Canonical text of the address (IPv6 without brackets or zone), or the input when invalid. */
  readonly address: string;
  readonly category: AddressCategory;
  readonly isPublic: boolean;
  /** The IPv4 address carried inside an IPv6 one; its category decided the verdict (except Teredo). */
  readonly embeddedIPv4?: string;
  readonly embedding?: IPv4Embedding;
}

type Range = readonly [cidr: string, category: Exclude<AddressCategory, 'public' | 'invalid'>];

// Order matters only where ranges overlap: the broadcast address sits inside 240/4.
const IPV4_RANGES: readonly Range[] = [
  ['255.255.255.255/32', 'broadcast'],
  ['0.0.0.0/8', 'unspecified'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'cgnat'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'], // includes the cloud metadata service 169.254.169.254
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'], // IETF protocol assignments (NAT64 discovery, DS-Lite)
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', 'reserved'], // deprecated 6to4 relay anycast
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'reserved'], // benchmarking
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['240.0.0.0/4', 'reserved'],
];

// Checked after the embedded-IPv4 forms (which are handled in code) and before the 2000::/3 rule.
const IPV6_RANGES: readonly Range[] = [
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['64:ff9b:1::/48', 'private'], // local-use NAT64 (RFC 8215): translates to whatever the site wants
  ['100::/64', 'reserved'], // discard-only
  ['2001::/23', 'reserved'], // IETF protocol assignments: Teredo, benchmarking, ORCHID, AMT
  ['2001:db8::/32', 'documentation'],
  ['3fff::/20', 'documentation'],
  ['fc00::/7', 'private'], // unique local
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'private'], // deprecated site-local, still routed inside some sites
  ['ff00::/8', 'multicast'],
];

const parsedV4 = IPV4_RANGES.map(([cidr, category]) => [ipaddr.IPv4.parseCIDR(cidr), category] as const);
const parsedV6 = IPV6_RANGES.map(([cidr, category]) => [ipaddr.IPv6.parseCIDR(cidr), category] as const);
const globalUnicast = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * Classifies an IP address given in any notation a client would accept: dotted quad, the odd IPv4
 * spellings, IPv6 with or without brackets or zone id, IPv4 inside IPv6. Anything that is not an
 * IP address is `invalid` (and therefore not public).
 */
export function classifyAddress(input: string): AddressClassification {
  const parsed = parseAddress(input);
  if (parsed === null) return { address: input, category: 'invalid', isPublic: false };
  return parsed.kind() === 'ipv4' ? classifyV4(parsed as ipaddr.IPv4) : classifyV6(parsed as ipaddr.IPv6);
}

/** True when `hostname` (bracketed or not) is an IP address literal rather than a DNS name. */
export function isIpLiteral(hostname: string): boolean {
  return parseAddress(hostname) !== null;
}

function parseAddress(input: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  let text = input.trim();
  if (text.startsWith('[') && text.endsWith(']')) text = text.slice(1, -1);
  const zone = text.indexOf('%');
  if (zone !== -1 && text.includes(':')) text = text.slice(0, zone); // fe80::1%eth0: the zone does not change the range
  if (isIP(text) === 4) return ipaddr.IPv4.parse(text);
  if (isIP(text) === 6) {
    // Re-serialise through the URL parser (hex words only) before ipaddr.js sees it: ipaddr.js
    // 2.5 reads `::127.0.0.1` as `::ffff:127.0.0.1`, while the socket layer dials `::7f00:1`.
    try {
      return ipaddr.IPv6.parse(new URL(`http://[${text}]/`).hostname.slice(1, -1));
    } catch {
      return null;
    }
  }
  if (text.includes(':') || text === '') return null;
  // Not a canonical dotted quad: let the URL parser decide what a client would make of it.
  let hostname: string;
  try {
    hostname = new URL(`http://${text}/`).hostname;
  } catch {
    return null;
  }
  return isIP(hostname) === 4 ? ipaddr.IPv4.parse(hostname) : null;
}

function classifyV4(address: ipaddr.IPv4): AddressClassification {
  const text = address.toString();
  for (const [range, category] of parsedV4) {
    if (address.match(range)) return { address: text, category, isPublic: false };
  }
  return { address: text, category: 'public', isPublic: true };
}

function classifyV6(address: ipaddr.IPv6): AddressClassification {
  const text = address.toNormalizedString() === '0:0:0:0:0:0:0:0' ? '::' : address.toRFC5952String();
  const embedded = embeddedIPv4(address);
  if (embedded) {
    const inner = classifyV4(embedded.ipv4);
    const base = { address: text, embeddedIPv4: inner.address, embedding: embedded.embedding };
    // Teredo and IPv4-compatible addresses are obsolete tunnels: never a legitimate public target,
    // but the embedded category still makes the log line useful ("teredo to 10.0.0.1").
    if (!inner.isPublic) return { ...base, category: inner.category, isPublic: false };
    if (embedded.embedding === 'teredo' || embedded.embedding === 'ipv4-compatible') {
      return { ...base, category: 'reserved', isPublic: false };
    }
    return { ...base, category: 'public', isPublic: true };
  }
  for (const [range, category] of parsedV6) {
    if (address.match(range)) return { address: text, category, isPublic: false };
  }
  if (!address.match(globalUnicast)) return { address: text, category: 'reserved', isPublic: false };
  return { address: text, category: 'public', isPublic: true };
}

function embeddedIPv4(address: ipaddr.IPv6): { ipv4: ipaddr.IPv4; embedding: IPv4Embedding } | null {
  const p = address.parts as [number, number, number, number, number, number, number, number];
  const fromWords = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
  const lowWords = fromWords(p[6], p[7]);
  const zeros = (from: number, to: number) => p.slice(from, to).every((word) => word === 0);
  if (zeros(0, 5) && p[5] === 0xffff) return { ipv4: lowWords, embedding: 'ipv4-mapped' };
  if (zeros(0, 4) && p[4] === 0xffff && p[5] === 0) return { ipv4: lowWords, embedding: 'ipv4-translated' };
  // ::/96 minus :: and ::1, which the range table names precisely.
  if (zeros(0, 6) && (p[6] !== 0 || p[7] > 1)) return { ipv4: lowWords, embedding: 'ipv4-compatible' };
  if (p[0] === 0x64 && p[1] === 0xff9b && zeros(2, 6)) return { ipv4: lowWords, embedding: 'nat64' };
  if (p[0] === 0x2002) return { ipv4: fromWords(p[1], p[2]), embedding: '6to4' };
  // Teredo (2001:0::/32) stores the client's IPv4 address inverted in the last 32 bits.
  if (p[0] === 0x2001 && p[1] === 0) return { ipv4: fromWords(p[6] ^ 0xffff, p[7] ^ 0xffff), embedding: 'teredo' };
  return null;
}
