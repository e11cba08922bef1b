import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Revocable access tokens: `accounts.tokens_valid_after` (epoch ms) is the moment of the account's
 * last "revoke tokens"; an access token issued before it is refused (accounts/accounts.ts). Null for an
 * account whose tokens were never revoked. Numbered 0009: 0008 is taken by a change made in parallel.
 */
export const migration0009TokenRevocation = {
  async up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
    await db.schema.alterTable('accounts').addColumn('tokens_valid_after', 'bigint').execute();
  },
};
