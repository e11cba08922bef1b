/**
 * An undici dispatcher for customer destinations (webhooks). Every new connection goes through
 * resolveCheckedAddress and the socket is opened to the checked IP, not to the name, so DNS
 * rebinding cannot swap the address between check and connect. `Host` and TLS SNI/certificate
 * checks still use the original name: undici derives them from the origin, which we leave alone.
 *
 * Callers must not follow redirects (use `undici.request`, or `fetch` with `redirect: 'manual'`): a
 * webhook answer is not an instruction to go elsewhere. Should a redirect be followed anyway, the
 * new connection is still guarded.
 */
import { Agent, buildConnector } from 'undici';
import { resolveCheckedAddress, type OutboundPolicy } from './resolve-checked-address.js';

/** Timeouts of the guarded dispatcher; DNS has its own deadline in the policy. */
export interface GuardedDispatcherOptions {
  /** TCP + TLS handshake deadline. @defaultValue 10000 */
  readonly connectTimeoutMs?: number;
  /** Deadline for the response headers. @defaultValue 10000 */
  readonly headersTimeoutMs?: number;
  /** Deadline between body chunks. @defaultValue 10000 */
  readonly bodyTimeoutMs?: number;
  /** Opens the socket once the address is chosen. Tests and TLS tweaks only. @defaultValue undici's `buildConnector` */
  readonly connector?: buildConnector.connector;
}

/**
 * Wraps a connector so it only ever dials an address the policy accepted. Exposed for callers that
 * build their own undici Client or Pool.
 */
export function createGuardedConnector(
  policy: OutboundPolicy,
  base: buildConnector.connector,
): buildConnector.connector {
  return (options, callback) => {
    resolveCheckedAddress(options.hostname, policy).then(
      ({ address }) => base({ ...options, hostname: address }, callback),
      (error: Error) => callback(error, null),
    );
  };
}

/** An undici Agent whose connections are resolved, checked and pinned by the policy. */
export function createGuardedDispatcher(policy: OutboundPolicy, options: GuardedDispatcherOptions = {}): Agent {
  const base = options.connector ?? buildConnector({ timeout: options.connectTimeoutMs ?? 10_000 });
  return new Agent({
    connect: createGuardedConnector(policy, base),
    headersTimeout: options.headersTimeoutMs ?? 10_000,
    bodyTimeout: options.bodyTimeoutMs ?? 10_000,
  });
}
