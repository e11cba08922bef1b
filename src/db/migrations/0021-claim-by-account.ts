import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * The job claim (jobs-store.ts `claimJobs`) reads each account's first due jobs in claim order, and the
 * accounts with pending jobs, from this index: a claim costs what it picks, not the whole queue (issue 52).
 */
export const migration0021ClaimByAccount = {
  async up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
    await db.schema
      .createIndex('jobs_claim_account')
      .on('jobs')
      .columns(['status', 'account_id', 'run_at', 'seq'])
      .execute();
  },
};
