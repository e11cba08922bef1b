/**
 * Idempotency keys: a retried create request with the same `Idempotency-Key` within 24 hours gets the
 * first answer again and is charged once.
 * - first request: the key is claimed (a row in state `pending`, held by this process under a lease
 *   it renews), the work runs, its answer is stored;
 *   if the work fails, the claim is released so a retry can run it again (the failure was refunded);
 * - repeat with the same body: the stored answer (same URL, same job);
 * - repeat while the first is still running: 409 IDEMPOTENCY_KEY_IN_USE (retry shortly);
 * - repeat after the first died with its process (nobody renewed the lease): the retry takes the key
 *   over and runs the work; the dead request's credit is voided by the charges recovery;
 * - the same key with a different body or endpoint: 422. A body that ends in an uploaded file (a
 *   multipart batch) is fingerprinted with the file's SHA-256, taken as it streams in (`uploadDigest`),
 *   so another file under the same name is another body (issue 49).
 */
import { createHash } from 'node:crypto';
import { Transform, type Readable } from 'node:stream';
import type { Db, Tx } from '../db/database.js';
import { AppError, ValidationError } from '../shared/errors.js';
import * as store from './idempotency-store.js';

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** SHA-256 over the endpoint and the body with object keys sorted, so key order does not matter. */
function requestFingerprint(endpoint: string, body: unknown): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical);
    if (value && typeof value === 'object') {
      return Object.fromEntries(
        Object.keys(value)
          .sort()
          .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
      );
    }
    return value;
  };
  return createHash('sha256')
    .update(endpoint)
    .update('\n')
    .update(JSON.stringify(canonical(body)))
    .digest('hex');
}

function validateIdempotencyKey(key: string | undefined): string | undefined {
  if (key === undefined) return undefined;
  if (key.length < 1 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
    throw new ValidationError([
      {
        loc: ['header', 'idempotency-key'],
        msg: `Idempotency-Key should be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters`,
        type: 'value_error',
      },
    ]);
  }
  return key;
}

/**
 * The request's key as every paid door reads it (sync, async, images, PDF tools): the header checked,
 * and the fingerprint over the endpoint and the body; undefined without the header.
 */
export function idempotentRequest(
  header: string | undefined,
  endpoint: string,
  body: unknown,
): IdempotentRequest | undefined {
  const key = validateIdempotencyKey(header);
  return key === undefined ? undefined : { key, fingerprint: requestFingerprint(endpoint, body) };
}

/**
 * The key of a request whose fingerprint is known only once its upload has been read: the header is
 * checked at once, `request()` fingerprints the body (upload digest included) after the read.
 */
export interface DeferredIdempotentRequest {
  key: string;
  request(): IdempotentRequest;
}

/** As idempotentRequest, with the body given once it is whole; undefined without the header. */
export function deferredIdempotentRequest(
  header: string | undefined,
  endpoint: string,
  body: () => unknown,
): DeferredIdempotentRequest | undefined {
  const key = validateIdempotencyKey(header);
  return key === undefined
    ? undefined
    : { key, request: () => ({ key, fingerprint: requestFingerprint(endpoint, body()) }) };
}

/** An upload passed through while its SHA-256 is taken; `digest()` once it has been read to its end. */
export function uploadDigest(upload: Readable): { stream: Readable; digest(): string } {
  const hash = createHash('sha256');
  const tap = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk);
      done(null, chunk);
    },
  });
  upload.on('error', (error) => tap.destroy(error));
  upload.pipe(tap);
  let digest: string | undefined;
  return { stream: tap, digest: () => (digest ??= hash.digest('hex')) };
}

/** The outcome of claiming a key: this request runs the work, or the first answer is replayed. */
export type KeyClaim = { kind: 'claimed'; accountId: string; key: string } | { kind: 'replay'; stored: unknown };

/** A request's key, as the caller gives it. */
export interface IdempotentRequest {
  key: string;
  fingerprint: string;
}

export interface IdempotencyService {
  /** True when a finished answer is stored under the key: a retry may replay it (its request need not be paid for again). */
  isStored(accountId: string, key: string): Promise<boolean>;
  /** Claims the key, or finds the stored answer; throws 409 while another live request holds it, 422 for another body. */
  claim(accountId: string, request: IdempotentRequest): Promise<KeyClaim>;
  /** Stores the answer of a claimed key (in the caller's transaction, so it commits with the charge). */
  complete(claim: Extract<KeyClaim, { kind: 'claimed' }>, answer: unknown, trx?: Tx): Promise<void>;
  /** Frees a claimed key after its work failed; never throws (the lease frees it otherwise). */
  release(claim: Extract<KeyClaim, { kind: 'claimed' }>): Promise<void>;
  /** Extends the leases of the keys this process is working on (called every third of a lease). */
  renewHeld(now?: number): Promise<void>;
  sweep(): Promise<number>;
}

export interface IdempotencyOptions {
  /** This process (`host:pid:random`). */
  instanceId: string;
  /** How long a pending key stays held without renewal. */
  leaseMs: number;
}

const inUse = () =>
  new AppError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is being processed; retry shortly.', {
    details: { retryAfterSeconds: 1 },
  });

export function createIdempotencyService(db: Db, options: IdempotencyOptions): IdempotencyService {
  const { instanceId, leaseMs } = options;
  /** `account\nkey` of the keys this process holds and works on: only these are renewed. */
  const held = new Map<string, string>();
  const heldId = (accountId: string, key: string) => `${accountId}\n${key}`;

  const service: IdempotencyService = {
    async isStored(accountId, key) {
      const row = await store.findKey(db, accountId, key);
      return row !== undefined && row.state === 'done' && Number(row.expires_at) > Date.now();
    },

    async claim(accountId, { key, fingerprint }) {
      const now = Date.now();
      await store.deleteExpiredKey(db, accountId, key, now);
      const claimed = await store.claimKey(db, {
        account_id: accountId,
        idem_key: key,
        request_hash: fingerprint,
        state: 'pending',
        response: null,
        created_at: now,
        expires_at: now + IDEMPOTENCY_TTL_MS,
        holder: instanceId,
        lease_until: now + leaseMs,
      });
      if (!claimed) {
        const existing = await store.findKey(db, accountId, key);
        if (!existing) throw inUse();
        if (existing.request_hash !== fingerprint) {
          throw new ValidationError([
            {
              loc: ['header', 'idempotency-key'],
              msg: 'This Idempotency-Key was already used with a different request; use a new key for a new request',
              type: 'idempotency_key_reused',
            },
          ]);
        }
        if (existing.state === 'done' && existing.response !== null)
          return { kind: 'replay', stored: JSON.parse(existing.response) as unknown };
        if (!(await store.takeOverExpiredKey(db, accountId, key, instanceId, now, now + leaseMs))) throw inUse();
      }
      held.set(heldId(accountId, key), key);
      return { kind: 'claimed', accountId, key };
    },

    async complete(claim, answer, trx) {
      const stored = await store.completeKey(trx ?? db, claim.accountId, claim.key, instanceId, JSON.stringify(answer));
      held.delete(heldId(claim.accountId, claim.key));
      // Only when this process stalled past its lease and a retry took the key over: that retry answers.
      if (!stored) throw inUse();
    },

    async release(claim) {
      held.delete(heldId(claim.accountId, claim.key));
      await store.releaseKey(db, claim.accountId, claim.key, instanceId).catch(() => undefined);
    },

    async renewHeld(now = Date.now()) {
      await store.renewKeys(db, instanceId, [...new Set(held.values())], now + leaseMs);
    },

    sweep() {
      return store.deleteExpiredKeys(db, Date.now());
    },
  };
  return service;
}

/**
 * The accept-at-once flow of a queued piece of work (create-async, a batch): with a key, a replay answers
 * the stored answer decoded; otherwise `accept` runs with the claim (it completes the claim in its own
 * transaction) and a failure frees the key. Without a key, `accept` runs alone.
 */
export async function acceptOnce<T>(
  idempotency: IdempotencyService,
  accountId: string,
  request: IdempotentRequest | undefined,
  o: { accept(claim: Extract<KeyClaim, { kind: 'claimed' }> | undefined): Promise<T>; decode(stored: unknown): T },
): Promise<T> {
  const claim = request ? await idempotency.claim(accountId, request) : undefined;
  if (claim?.kind === 'replay') return o.decode(claim.stored);
  try {
    return await o.accept(claim);
  } catch (error) {
    if (claim) await idempotency.release(claim);
    throw error;
  }
}
