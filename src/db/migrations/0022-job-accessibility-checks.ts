import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Accessible documents (issue 53): a completed PDF/UA job keeps the check its file passed, so the job and
 * its webhook name `accessibility_checks` as a synchronous answer does; null for every other job.
 */
export const migration0022JobAccessibilityChecks = {
  async up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
    await db.schema.alterTable('jobs').addColumn('accessibility_checks', 'text').execute();
  },
};
