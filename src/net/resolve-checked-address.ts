/**
 * The choke point of the outbound guard: resolve a host once, refuse it if ANY answer is outside
 * the allowed networks, and hand back the one checked address the caller must connect to.
 *
 * Connecting to the returned address (never the name) is what defeats DNS rebinding: the answer
 * we checked is the answer we use, so a second, different answer cannot slip in between.
 * Refusing when any answer is private (rather than picking a public one) keeps a hostile zone
 * that mixes answers from probing us with retries.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { classifyAddress } from './classify-address.js';
import { OutboundBlockedError } from './outbound-blocked-error.js';

/** One DNS answer. */
export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a hostname to all of its addresses (A and AAAA). */
export type ResolveHost = (hostname: string) => Promise<ResolvedAddress[]>;

/** How outbound connections to customer-supplied destinations are guarded. */
export interface OutboundPolicy {
  /**
   * Lets customer URLs reach private, loopback and link-local addresses (config
   * `PRESSROOM_ALLOW_PRIVATE_NETWORKS`). Development and tests only.
   */
  readonly allowPrivateNetworks: boolean;
  /** DNS resolution; injectable so tests can simulate hostile answers. @defaultValue `dns.lookup(all)` */
  readonly resolve?: ResolveHost;
  /** Deadline for one resolution; getaddrinfo itself has none. @defaultValue 5000 */
  readonly resolveTimeoutMs?: number;
}

/** The system resolver (honours /etc/hosts, like every other client on the machine). */
export const systemResolve: ResolveHost = async (hostname) => {
  const answers = await dnsLookup(hostname, { all: true, verbatim: true });
  return answers.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/**
 * Returns the address to connect to for `hostname` (a DNS name or an IP literal, brackets allowed),
 * or throws OutboundBlockedError. DNS failures are rethrown as they are (they are not refusals).
 */
export async function resolveCheckedAddress(hostname: string, policy: OutboundPolicy): Promise<ResolvedAddress> {
  const host = stripBrackets(hostname);
  if (isIP(host) !== 0) {
    // Keep the literal as given: a zone id (fe80::1%eth0) is needed to connect but not to classify.
    return { address: host, family: checkOne(host, host, policy).family };
  }
  const answers = await withTimeout(
    (policy.resolve ?? systemResolve)(host),
    policy.resolveTimeoutMs ?? 5000,
    `DNS lookup for ${host} timed out`,
  );
  if (answers.length === 0)
    throw Object.assign(new Error(`DNS lookup for ${host} returned no addresses`), { code: 'ENOTFOUND' });
  const checked = answers.map((answer) => checkOne(host, answer.address, policy));
  // IPv4 first: dialling one pinned address gives up Node's Happy Eyeballs fallback, and many
  // hosts (containers especially) have no IPv6 route, so a v6-first pick would fail outright.
  return checked.find((a) => a.family === 4) ?? (checked[0] as ResolvedAddress);
}

function checkOne(host: string, address: string, policy: OutboundPolicy): ResolvedAddress {
  const verdict = classifyAddress(address);
  const family: 4 | 6 = isIP(verdict.address) === 6 ? 6 : 4;
  if (verdict.category === 'invalid') {
    throw new OutboundBlockedError(`${host}: resolver returned "${address}", which is not an IP address`, {
      host,
      address,
    });
  }
  if (!verdict.isPublic && !policy.allowPrivateNetworks) {
    const via = verdict.embedding ? ` via ${verdict.embedding} ${verdict.embeddedIPv4}` : '';
    const subject = host === address ? `address ${address}` : `${host} resolved to ${address}`;
    throw new OutboundBlockedError(
      `${subject} is ${verdict.category}${via}; set PRESSROOM_ALLOW_PRIVATE_NETWORKS=true to allow (development only)`,
      {
        host,
        address: verdict.address,
        category: verdict.category,
      },
    );
  }
  return { address: verdict.address, family };
}

function stripBrackets(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

async function withTimeout<T>(promise: Promise<T>, timeoutMs: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(message), { code: 'ETIMEOUT' })), timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
