/**
 * Save-time validation of customer-supplied URLs (webhook URLs, S3 endpoints). It needs no DNS and
 * refuses what is wrong on its face: bad scheme, credentials, literal private IPs in any notation,
 * `localhost`. Names that merely *resolve* to private addresses are caught at connection time by
 * the guarded dispatcher and agents, which is the check that actually protects us; this one exists
 * so a customer hears about an obviously unusable URL when saving it, not on first delivery.
 */
import { classifyAddress, isIpLiteral } from './classify-address.js';

/** Why a URL was refused. */
export type UrlRefusal =
  | 'invalid-url'
  | 'unsupported-protocol'
  | 'https-required'
  | 'credentials-in-url'
  | 'private-address';

/** Outcome of checkUrl; `message` is safe to return to the customer as is. */
export type CheckUrlResult =
  | { readonly ok: true; readonly url: URL }
  | { readonly ok: false; readonly reason: UrlRefusal; readonly message: string; readonly detail: string };

/** What checkUrl enforces. */
export interface CheckUrlOptions {
  /**
   * Accept private, loopback and link-local destinations. Also relaxes `requireHttps` to allow
   * plain `http:`, because development and tests run receivers on loopback without certificates.
   */
  readonly allowPrivateNetworks: boolean;
  /** Refuse `http:` (unless allowPrivateNetworks). */
  readonly requireHttps: boolean;
}

const PRIVATE_MESSAGE =
  'must point to a public internet address; private, loopback and link-local addresses are not allowed';

/** Parses and vets a customer URL without touching the network. */
export function checkUrl(input: string, options: CheckUrlOptions): CheckUrlResult {
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return refuse(
      'invalid-url',
      'must be an absolute URL such as https://hooks.example.com/pressroom',
      'unparsable URL',
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    return refuse('unsupported-protocol', 'must start with https://', `scheme ${url.protocol}`);
  }
  if (url.protocol === 'http:' && options.requireHttps && !options.allowPrivateNetworks) {
    return refuse('https-required', 'must start with https://', 'plain http');
  }
  if (url.username !== '' || url.password !== '') {
    return refuse('credentials-in-url', 'must not contain a user name or password', 'userinfo present');
  }
  if (options.allowPrivateNetworks) return { ok: true, url };

  // The URL parser has already turned 2130706433, 0x7f.1, 0177.0.0.1 and 127.1 into 127.0.0.1,
  // exactly as the HTTP client will, so the literal we classify is the one that would be dialled.
  const host = url.hostname;
  if (isIpLiteral(host)) {
    const verdict = classifyAddress(host);
    if (!verdict.isPublic)
      return refuse('private-address', PRIVATE_MESSAGE, `literal ${verdict.address} is ${verdict.category}`);
    return { ok: true, url };
  }
  const name = host.toLowerCase().replace(/\.+$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) {
    return refuse('private-address', PRIVATE_MESSAGE, `hostname ${host} is reserved for loopback (RFC 6761)`);
  }
  return { ok: true, url };
}

function refuse(reason: UrlRefusal, message: string, detail: string): CheckUrlResult {
  return { ok: false, reason, message, detail };
}
