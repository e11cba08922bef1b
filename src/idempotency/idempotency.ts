/**
 * Idempotency keys: a retried create request with the same `Idempotency-Key` within 24 hours gets the
 * first answer again and is charged once.
 * - first request: the key is claimed (a row in state `pending`), the work runs, its answer is stored;
 *   if the work fails, the claim is released so a retry can run it again (the failure was refunded);
 * - repeat with the same body: the stored answer (same URL, same job);
 * - repeat while the first is still running: 409 IDEMPOTENCY_KEY_IN_USE (retry shortly);
 * - the same key with a different body or endpoint: 422.
 */
import { createHash } from 'node:crypto';
import type { Db } from '../db/database.js';
import { AppError, ValidationError } from '../shared/errors.js';
import * as store from './idempotency-store.js';

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** SHA-256 over the endpoint and the body with object keys sorted, so key order does not matter. */
export function requestFingerprint(endpoint: string, body: unknown): string {
  const canonical = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(canonical);
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.keys(value).sort().map((k) => [k, canonical((value as Record<string, unknown>)[k])]));
    }
    return value;
  };
  return createHash('sha256').update(endpoint).update('\n').update(JSON.stringify(canonical(body))).digest('hex');
}

export function validateIdempotencyKey(key: string | undefined): string | undefined {
  if (key === undefined) return undefined;
  if (key.length < 1 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
    throw new ValidationError([
      { loc: ['header', 'idempotency-key'], msg: `Idempotency-Key should be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} visible ASCII characters`, type: 'value_error' },
    ]);
  }
  return key;
}

export interface IdempotencyService {
  /**
   * Runs `work` once per (account, key). `encode`/`decode` turn the answer into stored JSON and back
   * (a binary answer is stored as a file reference).
   */
  run<T>(accountId: string, key: string, fingerprint: string, work: () => Promise<T>, codec?: { encode(v: T): unknown; decode(v: unknown): Promise<T> | T }): Promise<T>;
  sweep(): Promise<number>;
}

export function createIdempotencyService(db: Db): IdempotencyService {
  return {
    async run(accountId, key, fingerprint, work, codec) {
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
      });
      if (!claimed) {
        const existing = await store.findKey(db, accountId, key);
        if (!existing) throw new AppError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is being processed; retry shortly.');
        if (existing.request_hash !== fingerprint) {
          throw new ValidationError([
            { loc: ['header', 'idempotency-key'], msg: 'This Idempotency-Key was already used with a different request; use a new key for a new request', type: 'idempotency_key_reused' },
          ]);
        }
        if (existing.state !== 'done' || existing.response === null) {
          throw new AppError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is being processed; retry shortly.', { details: { retryAfterSeconds: 1 } });
        }
        const stored = JSON.parse(existing.response) as unknown;
        return codec ? codec.decode(stored) : (stored as Awaited<ReturnType<typeof work>>);
      }
      try {
        const result = await work();
        await store.completeKey(db, accountId, key, JSON.stringify(codec ? codec.encode(result) : result));
        return result;
      } catch (error) {
        await store.releaseKey(db, accountId, key).catch(() => undefined);
        throw error;
      }
    },

    sweep() {
      return store.deleteExpiredKeys(db, Date.now());
    },
  };
}
