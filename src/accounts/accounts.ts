/**
 * Accounts and their credentials: creation (with the initial credits as one BONUS transaction),
 * API keys (shown once, stored hashed), access tokens, and resolving a credential to an account.
 */
import type { Plan } from '../shared/config.js';
import type { Db } from '../db/database.js';
import { withTransaction } from '../db/database.js';
import { AppError } from '../shared/errors.js';
import { newAccountId } from '../shared/ids.js';
import { safeEqual, sha256Hex } from '../shared/crypto.js';
import type { CreditLedger } from '../credits/ledger.js';
import * as store from './accounts-store.js';
import {
  ACCESS_TOKEN_TTL_SECONDS,
  apiKeyPrefix,
  generateApiKey,
  isApiKeyShaped,
  type AccessTokenSigner,
} from './credentials.js';

/**
 * Bounds of per-account rate-limit overrides: far above any plan, and within the 32-bit integer
 * columns that hold them on PostgreSQL.
 */
export const RATE_LIMIT_MAXIMUMS = { perMinute: 1_000_000, perDay: 1_000_000_000 } as const;

/** Who is calling, as resolved from a credential. */
export interface Caller {
  accountId: string;
  plan: Plan;
  rateLimitPerMinute: number | null;
  rateLimitPerDay: number | null;
  credential: 'api_key' | 'access_token';
}

export interface CreateAccountInput {
  email?: string | null;
  credits?: number;
  plan?: Plan;
  rateLimit?: { perMinute?: number | null; perDay?: number | null };
}

export interface AccountService {
  create(input: CreateAccountInput): Promise<{ account_id: string; api_key: string; plan: Plan; credits: number }>;
  get(accountId: string): Promise<{ id: string; email: string | null; plan: Plan; credits: number }>;
  createApiKey(accountId: string): Promise<string>;
  listApiKeys(accountId: string): Promise<{ prefix: string; createdAt: number; revokedAt: number | null }[]>;
  /** Revokes any account's key (the operator's door: the admin API and CLI, which can issue another). */
  revokeApiKey(prefix: string): Promise<void>;
  /**
   * Revokes one of the account's own keys (self-service). Refuses (409 LAST_API_KEY) the account's last
   * working key: access tokens only read, so without a key nothing could make a new one.
   */
  revokeOwnApiKey(accountId: string, prefix: string): Promise<void>;
  issueAccessToken(accountId: string, ttlSeconds: number): Promise<string>;
  /**
   * Revokes every access token of the account issued up to now (they answer 401 from the next
   * request on); tokens issued afterwards work. Returns the cut-off (epoch ms).
   */
  revokeAccessTokens(accountId: string): Promise<{ revokedBefore: number }>;
  /** Resolves an API key; null when unknown, revoked or malformed. */
  authenticateApiKey(apiKey: string): Promise<Caller | null>;
  /** Resolves a JWT access token; null when invalid, expired or revoked, or its account no longer exists. */
  authenticateAccessToken(token: string): Promise<Caller | null>;
}

export function createAccountService(db: Db, ledger: CreditLedger, tokens: AccessTokenSigner): AccountService {
  async function insertNewKey(accountId: string, executor: Parameters<typeof store.insertApiKey>[0]): Promise<string> {
    const apiKey = generateApiKey();
    await store.insertApiKey(executor, {
      prefix: apiKeyPrefix(apiKey),
      account_id: accountId,
      key_hash: sha256Hex(apiKey),
      created_at: Date.now(),
    });
    return apiKey;
  }

  async function requireAccount(accountId: string) {
    const account = await store.findAccount(db, accountId);
    if (!account) throw new AppError('ACCOUNT_NOT_FOUND', `No account has the id ${accountId}.`);
    return account;
  }

  return {
    async create(input) {
      checkRateLimits(input.rateLimit);
      const accountId = newAccountId();
      const plan = input.plan ?? 'free';
      const credits = input.credits ?? 0;
      return withTransaction(db, async (trx) => {
        await store.insertAccount(trx, {
          id: accountId,
          email: input.email ?? null,
          plan,
          credits: 0,
          rate_limit_per_minute: input.rateLimit?.perMinute ?? null,
          rate_limit_per_day: input.rateLimit?.perDay ?? null,
          created_at: Date.now(),
          tokens_valid_after: null,
        });
        const balance = credits > 0 ? await ledger.grant(accountId, credits, 'BONUS', trx) : 0;
        const apiKey = await insertNewKey(accountId, trx);
        return { account_id: accountId, api_key: apiKey, plan, credits: balance };
      });
    },

    async get(accountId) {
      const account = await requireAccount(accountId);
      return { id: account.id, email: account.email, plan: account.plan, credits: account.credits };
    },

    async createApiKey(accountId) {
      await requireAccount(accountId);
      return insertNewKey(accountId, db);
    },

    async listApiKeys(accountId) {
      const rows = await store.listApiKeys(db, accountId);
      return rows.map((r) => ({
        prefix: r.prefix,
        createdAt: Number(r.created_at),
        revokedAt: r.revoked_at === null ? null : Number(r.revoked_at),
      }));
    },

    async revokeApiKey(prefix) {
      const revoked = await store.revokeApiKey(db, prefix, Date.now());
      if (!revoked) throw notFound(prefix);
    },

    revokeOwnApiKey(accountId, prefix) {
      return withTransaction(db, async (trx) => {
        if (!(await store.lockAccountKeys(trx, accountId))) throw notFound(prefix);
        const live = await store.findLiveApiKey(trx, prefix);
        if (!live || live.account_id !== accountId) throw notFound(prefix);
        if ((await store.countLiveApiKeys(trx, accountId)) <= 1) {
          throw new AppError(
            'LAST_API_KEY',
            `Key ${prefix}… is the account's last working API key: revoked, it would lock the account out (nothing could make a new key). Create a new key first, then revoke this one. Nothing was changed.`,
          );
        }
        await store.revokeApiKey(trx, prefix, Date.now(), accountId);
      });
    },

    async issueAccessToken(accountId, ttlSeconds) {
      const { min, max } = ACCESS_TOKEN_TTL_SECONDS;
      if (!Number.isInteger(ttlSeconds) || ttlSeconds < min || ttlSeconds > max) {
        throw new AppError('INVALID_REQUEST', `ttl_seconds must be a whole number from ${min} to ${max}.`);
      }
      const account = await requireAccount(accountId);
      // Issued after the last revocation by the database's order of events, whatever this clock says.
      const notBeforeMs = account.tokens_valid_after === null ? undefined : account.tokens_valid_after + 1;
      return tokens.issue(accountId, ttlSeconds, notBeforeMs);
    },

    async revokeAccessTokens(accountId) {
      const cutOff = await store.raiseTokensValidAfter(db, accountId, Date.now());
      if (cutOff === undefined) throw new AppError('ACCOUNT_NOT_FOUND', `No account has the id ${accountId}.`);
      return { revokedBefore: cutOff };
    },

    async authenticateApiKey(apiKey) {
      if (!isApiKeyShaped(apiKey)) return null;
      const row = await store.findLiveApiKey(db, apiKeyPrefix(apiKey));
      if (!row || !safeEqual(row.key_hash, sha256Hex(apiKey))) return null;
      return {
        accountId: row.account_id,
        plan: row.plan,
        rateLimitPerMinute: row.rate_limit_per_minute,
        rateLimitPerDay: row.rate_limit_per_day,
        credential: 'api_key',
      };
    },

    async authenticateAccessToken(token) {
      const verified = await tokens.verify(token);
      if (!verified) return null;
      const { accountId, issuedAtMs } = verified;
      // Read on every request, never cached: a revocation takes effect at once on every process.
      const account = await store.findAccount(db, accountId);
      if (!account) return null;
      if (account.tokens_valid_after !== null && issuedAtMs <= account.tokens_valid_after) return null;
      return {
        accountId,
        plan: account.plan,
        rateLimitPerMinute: account.rate_limit_per_minute,
        rateLimitPerDay: account.rate_limit_per_day,
        credential: 'access_token',
      };
    },
  };
}

const notFound = (prefix: string) => new AppError('API_KEY_NOT_FOUND', `No active API key starts with ${prefix}.`);

/** The HTTP schema checks these first; this guards the other door (the CLI) with the same bounds. */
function checkRateLimits(rateLimit: CreateAccountInput['rateLimit']): void {
  for (const [field, max] of [
    ['perMinute', RATE_LIMIT_MAXIMUMS.perMinute],
    ['perDay', RATE_LIMIT_MAXIMUMS.perDay],
  ] as const) {
    const value = rateLimit?.[field];
    if (value !== null && value !== undefined && (!Number.isInteger(value) || value < 1 || value > max)) {
      throw new AppError(
        'INVALID_REQUEST',
        `The ${field === 'perMinute' ? 'per-minute' : 'per-day'} rate limit must be a whole number from 1 to ${max}.`,
      );
    }
  }
}
