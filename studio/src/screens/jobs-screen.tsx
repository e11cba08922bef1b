/** Jobs: the account's background (async) jobs — not documents made at once, nor a batch's items (said on the screen) — (with the template version each renders), filtered by status, paged, refreshed every 2 s while any is unfinished. */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api/session.js';
import { JOB_STATUSES, type JobList, type JobStatus } from '../lib/api-types.js';
import { formatTime, jobVersionText } from '../lib/format.js';
import { ErrorNotice } from '../components/notice.js';
import { Pager } from '../components/pager.js';
import { useLoad } from '../components/use-load.js';
import { TemplateRef } from '../components/template-ref.js';
import { useTemplateNames } from '../components/use-template-names.js';
import { Link, paths } from '../router.js';

const PAGE_SIZE = 20;
const POLL_MS = 2000;

export function JobsScreen() {
  const [status, setStatus] = useState<JobStatus | ''>('');
  const [offset, setOffset] = useState(0);
  const templateNames = useTemplateNames();
  const jobs = useLoad(
    () =>
      api().json<JobList>('GET', '/v1/pdf/jobs', { query: { status: status || undefined, limit: PAGE_SIZE, offset } }),
    [status, offset],
  );
  const live = jobs.data?.jobs.some((j) => j.status === 'pending' || j.status === 'processing') ?? false;

  useEffect(() => {
    if (!live) return;
    const timer = setInterval(() => {
      if (!document.hidden) void jobs.reload();
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [live, jobs.reload]);

  return (
    <main class="screen" id="main">
      <div class="screen-head">
        <h1 tabIndex={-1}>Background jobs</h1>
        <span class={`live ${live ? 'live-on' : ''}`} role="status">
          {live
            ? 'Live: refreshing every 2 s'
            : jobs.data && jobs.data.jobs.length > 0
              ? 'All shown jobs are finished'
              : ''}
        </span>
      </div>
      <p class="help" data-testid="jobs-scope">
        Documents made in the background: Run's <em>Background job</em>, and your own code's asynchronous requests.
        Documents made at once are not listed here (their charges are in{' '}
        <Link href={paths.transactions}>Transactions</Link>), and a batch's documents are on its page in{' '}
        <Link href={paths.batches}>Batches</Link>.
      </p>
      <div class="toolbar">
        <label class="field field-inline">
          <span class="field-label">Status</span>
          <select
            value={status}
            onChange={(e) => {
              setStatus(e.currentTarget.value as JobStatus | '');
              setOffset(0);
            }}
          >
            <option value="">All</option>
            {JOB_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <button type="button" class="button button-small" onClick={() => jobs.reload()}>
          Refresh
        </button>
      </div>
      <ErrorNotice>{jobs.error?.message}</ErrorNotice>
      {jobs.data && jobs.data.jobs.length === 0 && (
        <p class="empty">
          No background jobs{status ? ` with status ${status}` : ''} yet. Run a template as a background job from the
          editor.
        </p>
      )}
      {jobs.data && jobs.data.jobs.length > 0 && (
        <table class="table responsive-table">
          <caption class="visually-hidden">Jobs</caption>
          <thead>
            <tr>
              <th scope="col">Job</th>
              <th scope="col">Status</th>
              <th scope="col">Template</th>
              <th scope="col">Version</th>
              <th scope="col">Created</th>
              <th scope="col">Result</th>
            </tr>
          </thead>
          <tbody>
            {jobs.data.jobs.map((job) => (
              <tr key={job.id}>
                <td data-label="Job">
                  <code>{job.id}</code>
                </td>
                <td data-label="Status">
                  <span class={`badge badge-${job.status}`}>{job.status}</span>
                </td>
                <td data-label="Template">
                  <TemplateRef id={job.template_id} names={templateNames} />
                </td>
                <td data-label="Version">{job.version ? jobVersionText(job.version) : 'draft'}</td>
                <td data-label="Created">{formatTime(job.created_at)}</td>
                <td data-label="Result">
                  {job.result_url ? (
                    <a href={job.result_url} target="_blank" rel="noopener">
                      {job.result_filename ?? 'Download'}
                    </a>
                  ) : job.result_s3_key ? (
                    <code>
                      s3://{job.result_s3_bucket}/{job.result_s3_key}
                    </code>
                  ) : job.error_message ? (
                    <span class="error-text">
                      {job.error_code ? `${job.error_code}: ` : ''}
                      {job.error_message}
                    </span>
                  ) : (
                    '—'
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {jobs.data && (
        <Pager total={jobs.data.total} limit={PAGE_SIZE} offset={offset} onOffset={setOffset} label="Jobs pages" />
      )}
    </main>
  );
}
