import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * The fair job claim (jobs-store.ts `claimJobs`) breaks ties between accounts by who was served
 * longest ago: the latest `started_at` of each account with due jobs, read from this index (one index
 * probe per account instead of a scan of all its retained jobs). Numbered 0010 because 0008 and 0009
 * were being written in parallel on other branches.
 */
export const migration0010FairClaims = {
  async up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
    await db.schema.createIndex('jobs_account_started').on('jobs').columns(['account_id', 'started_at']).execute();
  },
};
