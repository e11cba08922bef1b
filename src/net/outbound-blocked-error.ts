/**
 * The one error the outbound guard throws. Its `message` is safe to show a customer (it names no
 * address, so it cannot be used to map our internal DNS); `reason` is the specific story for the log.
 */
import type { AddressCategory } from './classify-address.js';

/** What a customer sees when a destination is refused. */
export const OUTBOUND_BLOCKED_MESSAGE =
  'The destination is not allowed: it must be a public internet address (private, loopback and link-local networks are refused).';

/** A customer-supplied destination resolved to (or was) an address outside the allowed networks. */
export class OutboundBlockedError extends Error {
  override readonly name = 'OutboundBlockedError';
  readonly code = 'OUTBOUND_BLOCKED';
  constructor(
    /** Operator-facing detail, e.g. `hooks.example.com resolved to 10.0.0.7 (private)`. */
    readonly reason: string,
    readonly details: { host: string; address?: string; category?: AddressCategory } = { host: '' },
  ) {
    super(OUTBOUND_BLOCKED_MESSAGE);
  }
}

/**
 * Finds an OutboundBlockedError in an error's cause chain: undici wraps connector errors in
 * `TypeError('fetch failed', { cause })`, and callers further up may wrap again.
 */
export function findOutboundBlockedError(error: unknown): OutboundBlockedError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current !== null && current !== undefined; depth += 1) {
    if (current instanceof OutboundBlockedError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
