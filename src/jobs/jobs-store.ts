/**
 * SQL for the job queue. The row is the queue:
 *
 *   pending ──claim──▶ processing ──complete──▶ completed
 *      ▲                   │  │
 *      └──retry / release──┘  └──fail──▶ failed
 *
 * A claim takes a lease (`locked_by`, `locked_until`); a live worker renews it, a dead one lets it run
 * out and the row becomes claimable again. Every write after the claim checks that the worker still
 * holds the lease, so a job completes (or fails, or refunds) at most once even when two workers both
 * believed they had it.
 */
import { sql, type Updateable } from 'kysely';
import type { DocumentWarning } from '../shared/document-warnings.js';
import { claimRows, type ClaimRequest } from '../db/claim-rows.js';
import type { DatabaseHandle, DbOrTx } from '../db/database.js';
import type { JobRow, JobsTable, NewJob } from '../db/schema.js';

/** The four states of a job. */
export type JobStatus = JobsTable['status'];

/** Inserts a new job (the caller's transaction also holds its PDFGEN). */
export async function insertJob(db: DbOrTx, row: NewJob): Promise<void> {
  await db.insertInto('jobs').values(row).execute();
}

/**
 * Claims up to `limit` due jobs: pending ones whose `run_at` has come, and processing ones whose lease
 * ran out (their worker died). Fair across accounts, round robin: each due job is ranked within its
 * account (oldest first) and the jobs an account already has running count as ranks before them; the
 * lowest ranks go first, and among equal ranks the account served longest ago (its latest
 * `started_at`), then the oldest job. So one account's thousand queued jobs take turns with another
 * account's single job instead of going first, with one worker slot as with many. One statement per
 * dialect (window functions: PostgreSQL, SQLite ≥ 3.25); db/claim-rows.ts keeps two claimers apart.
 */
export function claimJobs(database: DatabaseHandle, c: ClaimRequest): Promise<JobRow[]> {
  // A batch's items wait while it is still queued (intake) or being cancelled (src/batches/): the few
  // such batches are read once per claim through the batches' (status, locked_until) index.
  const claimable = (alias: string) =>
    sql`(${sql.ref(`${alias}.batch_id`)} is null or ${sql.ref(`${alias}.batch_id`)} not in (select id from batches where status in ('intake', 'cancelling')))`;
  const due = (
    alias: string,
  ) => sql`((${sql.ref(`${alias}.status`)} = 'pending' and ${sql.ref(`${alias}.run_at`)} <= ${c.now})
         or (${sql.ref(`${alias}.status`)} = 'processing' and ${sql.ref(`${alias}.locked_until`)} < ${c.now}))
         and ${claimable(alias)}`;
  // Only an account's first `limit` due jobs can be picked (each of the rest has `limit` jobs of its own
  // account ranked before it), so only those are ranked: a claim reads `limit` rows per account through
  // the (status, account_id, run_at, seq) index, not every due job (10,000 queued batch items: 20–40 ms
  // of event loop per claim on SQLite, now under 1 ms; issue 52).
  return claimRows<JobRow>(database, {
    table: 'jobs',
    key: 'seq',
    lockAlias: 'j',
    selectDue: sql`
      with accounts as (
        select distinct account_id from jobs where status = 'pending'
        union
        select account_id from jobs where status = 'processing' and locked_until < ${c.now}
      ), candidates as (
        select p.seq, p.account_id, p.run_at from accounts a join jobs p on p.seq in (
          select x.seq from jobs x
          where x.status = 'pending' and x.account_id = a.account_id and x.run_at <= ${c.now} and ${claimable('x')}
          order by x.run_at, x.seq limit ${c.limit})
        union all
        select e.seq, e.account_id, e.run_at from jobs e
        where e.status = 'processing' and e.locked_until < ${c.now} and ${claimable('e')}
      ), ranked as (
        select seq, account_id, row_number() over (partition by account_id order by run_at, seq) as account_rank
        from candidates
      ), running as (
        select account_id, count(*) as n from jobs
        where status = 'processing' and locked_until >= ${c.now}
        group by account_id
      ), served as (
        -- one probe of the (account_id, started_at) index per account with due jobs
        select a.account_id, (select x.started_at from jobs x where x.account_id = a.account_id and x.started_at is not null
                              order by x.started_at desc limit 1) as last_started_at
        from (select distinct account_id from ranked) a
      )
      select j.seq from jobs j
        join ranked r on r.seq = j.seq
        join served s on s.account_id = r.account_id
        left join running a on a.account_id = r.account_id
      where ${due('j')}
      order by r.account_rank + coalesce(a.n, 0), coalesce(s.last_started_at, 0), j.run_at, j.seq
      limit ${c.limit}`,
    markClaimed: sql`
      status = 'processing', locked_by = ${c.workerId}, locked_until = ${c.now + c.leaseMs}, attempts = attempts + 1,
      started_at = coalesce(started_at, ${c.now}), updated_at = ${c.now}`,
  });
}

/** Extends the leases of every job this worker is processing (the heartbeat). */
export async function renewLeases(db: DbOrTx, workerId: string, until: number): Promise<number> {
  const result = await db
    .updateTable('jobs')
    .set({ locked_until: until })
    .where('locked_by', '=', workerId)
    .where('status', '=', 'processing')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** What a completed job produced. */
export interface JobResult {
  url: string | null;
  filename: string;
  expiresAt: number | null;
  s3Bucket: string | null;
  s3Key: string | null;
  /** The stored file of a url delivery. */
  fileId?: string | null;
  /** The render's warnings (issue 13); stored as JSON, null when none. */
  warnings?: DocumentWarning[];
  /** The PDF/UA check the file passed (`accessibility_checks`), under pdf_ua. */
  accessibilityChecks?: string;
}

/**
 * Ends this worker's claim on a processing job with `values` and frees the lease; false when the
 * lease was lost (another worker has the job now, or it already ended).
 */
async function updateHeldJob(
  db: DbOrTx,
  id: string,
  workerId: string,
  values: Updateable<JobsTable>,
): Promise<boolean> {
  const updated = await db
    .updateTable('jobs')
    .set({ ...values, locked_by: null, locked_until: null })
    .where('id', '=', id)
    .where('locked_by', '=', workerId)
    .where('status', '=', 'processing')
    .executeTakeFirst();
  return Number(updated.numUpdatedRows) > 0;
}

/** Marks the job completed if this worker still holds it; false when the lease was lost. */
export function completeJob(
  db: DbOrTx,
  id: string,
  workerId: string,
  result: JobResult,
  now: number,
): Promise<boolean> {
  return updateHeldJob(db, id, workerId, {
    status: 'completed',
    result_url: result.url,
    result_filename: result.filename,
    result_expires_at: result.expiresAt,
    result_s3_bucket: result.s3Bucket,
    result_s3_key: result.s3Key,
    result_file_id: result.fileId ?? null,
    warnings: result.warnings && result.warnings.length > 0 ? JSON.stringify(result.warnings) : null,
    accessibility_checks: result.accessibilityChecks ?? null,
    completed_at: now,
    updated_at: now,
  });
}

/** Marks the job failed for good if this worker still holds it; false when the lease was lost. */
export function failJob(
  db: DbOrTx,
  id: string,
  workerId: string,
  error: { code: string; message: string; detail: string },
  now: number,
): Promise<boolean> {
  return updateHeldJob(db, id, workerId, {
    status: 'failed',
    error_code: error.code,
    error_message: error.message,
    last_error: error.detail,
    completed_at: now,
    updated_at: now,
  });
}

/** Puts the job back in the queue for a later attempt, if this worker still holds it. */
export function retryJob(
  db: DbOrTx,
  id: string,
  workerId: string,
  retry: { runAt: number; lastError: string },
  now: number,
): Promise<boolean> {
  return updateHeldJob(db, id, workerId, {
    status: 'pending',
    run_at: retry.runAt,
    last_error: retry.lastError,
    updated_at: now,
  });
}

/**
 * Shutdown: hands this worker's unfinished jobs back to the queue at once. The interrupted attempt
 * is not counted (attempts − 1): it did not fail, we stopped it.
 */
export async function releaseJobs(db: DbOrTx, workerId: string, now: number): Promise<number> {
  const updated = await db
    .updateTable('jobs')
    .set((eb) => ({
      status: 'pending',
      run_at: now,
      attempts: eb('attempts', '-', 1),
      locked_by: null,
      locked_until: null,
      updated_at: now,
    }))
    .where('locked_by', '=', workerId)
    .where('status', '=', 'processing')
    .executeTakeFirst();
  return Number(updated.numUpdatedRows);
}

/** The job, if it belongs to the account (ownership is part of the key, so others' jobs are "not found"). */
export async function findJob(db: DbOrTx, accountId: string, id: string): Promise<JobRow | undefined> {
  return db.selectFrom('jobs').selectAll().where('id', '=', id).where('account_id', '=', accountId).executeTakeFirst();
}

/** The account's jobs, newest first, optionally of one status. */
export async function listJobs(
  db: DbOrTx,
  accountId: string,
  filter: { status?: JobStatus; limit: number; offset: number },
): Promise<JobRow[]> {
  // A batch's items are read through their batch (src/batches/), not listed among the account's jobs.
  let query = db.selectFrom('jobs').selectAll().where('account_id', '=', accountId).where('batch_id', 'is', null);
  if (filter.status) query = query.where('status', '=', filter.status);
  return query.orderBy('seq', 'desc').limit(filter.limit).offset(filter.offset).execute();
}

/** How many jobs the account has, optionally of one status. */
export async function countJobs(db: DbOrTx, accountId: string, status?: JobStatus): Promise<number> {
  let query = db
    .selectFrom('jobs')
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .where('account_id', '=', accountId)
    .where('batch_id', 'is', null);
  if (status) query = query.where('status', '=', status);
  return Number((await query.executeTakeFirstOrThrow()).total);
}

/** Pending and processing jobs (the queue), for /metrics: counted on the (status, run_at) index. */
export async function countQueuedJobs(db: DbOrTx): Promise<{ pending: number; processing: number }> {
  const rows = await db
    .selectFrom('jobs')
    .select(['status', (eb) => eb.fn.countAll<number>().as('total')])
    .where('status', 'in', ['pending', 'processing'])
    .groupBy('status')
    .execute();
  const count = (status: JobStatus) => Number(rows.find((r) => r.status === status)?.total ?? 0);
  return { pending: count('pending'), processing: count('processing') };
}

/**
 * Pending jobs per account, the `limit` accounts with the most (for /metrics): read on the
 * (status, run_at) index, grouped by account.
 */
export async function pendingJobsByAccount(
  db: DbOrTx,
  limit: number,
): Promise<{ accountId: string; pending: number }[]> {
  const rows = await db
    .selectFrom('jobs')
    .select(['account_id', (eb) => eb.fn.countAll<number>().as('total')])
    .where('status', '=', 'pending')
    .groupBy('account_id')
    .orderBy('total', 'desc')
    .orderBy('account_id')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ accountId: r.account_id, pending: Number(r.total) }));
}

/** The earliest `run_at` of a pending job that is due (retries waiting for their backoff are not), or null. */
export async function oldestDueRunAt(db: DbOrTx, now: number): Promise<number | null> {
  const row = await db
    .selectFrom('jobs')
    .select((eb) => eb.fn.min('run_at').as('oldest'))
    .where('status', '=', 'pending')
    .where('run_at', '<=', now)
    .executeTakeFirst();
  return row?.oldest === null || row?.oldest === undefined ? null : Number(row.oldest);
}

/**
 * Deletes up to `limit` finished jobs last updated before `before` whose webhook deliveries are all
 * settled (a delivery still retrying keeps its job), with those deliveries; returns how many jobs.
 * Batched so a large backlog never holds one long transaction.
 */
export async function deleteFinishedJobs(db: DbOrTx, before: number, limit: number): Promise<number> {
  const ids = (
    await db
      .selectFrom('jobs')
      .select('id')
      .where('status', 'in', ['completed', 'failed'])
      .where('updated_at', '<', before)
      .where((eb) =>
        eb.not(
          eb.exists(
            eb
              .selectFrom('webhook_deliveries')
              .select('webhook_deliveries.id')
              .whereRef('webhook_deliveries.job_id', '=', 'jobs.id')
              .where('webhook_deliveries.state', '=', 'pending'),
          ),
        ),
      )
      .limit(limit)
      .execute()
  ).map((row) => row.id);
  if (ids.length === 0) return 0;
  await db.deleteFrom('webhook_deliveries').where('job_id', 'in', ids).execute();
  const deleted = await db.deleteFrom('jobs').where('id', 'in', ids).executeTakeFirst();
  return Number(deleted.numDeletedRows);
}
