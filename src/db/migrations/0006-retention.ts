import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * Indexes for the retention sweep (jobs.ts `sweep`): finished jobs and settled webhook deliveries
 * are found by state and age without scanning the tables.
 */
export const migration0006Retention = {
  async up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
    await db.schema.createIndex('jobs_finished_age').on('jobs').columns(['status', 'updated_at']).execute();
    await db.schema.createIndex('webhook_deliveries_job').on('webhook_deliveries').columns(['job_id']).execute();
  },
};
