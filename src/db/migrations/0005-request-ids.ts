import type { Kysely } from 'kysely';
import type { Dialect } from '../dialect.js';

/**
 * The request id of the `create-async` call that made a job, kept on the job and copied to its
 * webhook deliveries, so the worker's and the delivery loop's log lines (and the webhook's
 * `x-request-id` header) name the request that started it (issue 7). Null for older rows.
 */
export const migration0005RequestIds = {
  async up(db: Kysely<unknown>, _dialect: Dialect): Promise<void> {
    // One column per statement: SQLite's ALTER TABLE adds one column at a time.
    await db.schema.alterTable('jobs').addColumn('request_id', 'text').execute();
    await db.schema.alterTable('webhook_deliveries').addColumn('request_id', 'text').execute();
  },
};
