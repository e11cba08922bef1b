/**
 * One batch, live: its counts and a progress bar with the time left (GET /v1/pdf/batches/{id}, every
 * 2 s while it runs and the tab is visible), Cancel (what has not started is refunded), the zip or
 * merged PDF to download once built, the failed rows with their errors, and each document's link when
 * the output is links.
 */
import { useEffect, useState } from 'preact/hooks';
import { describeRefusal } from '../../api/client.js';
import { api, refreshAccount } from '../../api/session.js';
import { BATCH_ENDED, type Batch, type BatchItemList, type BatchStatus } from '../../lib/api-types.js';
import { formatDuration, formatTime, jobVersionText } from '../../lib/format.js';
import { confirmAction } from '../../components/confirm-dialog.js';
import { ErrorNotice } from '../../components/notice.js';
import { Pager } from '../../components/pager.js';
import { TemplateRef } from '../../components/template-ref.js';
import { useLoad } from '../../components/use-load.js';

const POLL_MS = 2000;
const LINKS_PAGE = 50;

export const BATCH_STATUS_TEXT: Record<BatchStatus, string> = {
  pending: 'waiting',
  processing: 'running',
  cancelling: 'cancelling',
  assembling: 'putting the file together',
  completed: 'completed',
  completed_with_errors: 'completed with errors',
  failed: 'failed',
  cancelled: 'cancelled',
};

export const OUTPUT_TEXT = { links: 'a link per document', zip: 'one zip', merged: 'one merged PDF' } as const;

const batchPath = (id: string) => `/v1/pdf/batches/${encodeURIComponent(id)}`;
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** The rows of one status, a page at a time (empty when the batch has none). */
function useItems(batchId: string, status: 'failed' | 'completed', count: number, offset: number, limit: number) {
  return useLoad(
    async (): Promise<BatchItemList> =>
      count === 0
        ? { items: [], total: 0, limit, offset }
        : api().json<BatchItemList>('GET', `${batchPath(batchId)}/items`, { query: { status, limit, offset } }),
    [batchId, status, count, offset, limit],
  );
}

export function BatchWatch({
  batchId,
  templateNames,
  onUpdate,
}: {
  batchId: string;
  templateNames: Map<string, string>;
  onUpdate(batch: Batch): void;
}) {
  const batch = useLoad(() => api().json<Batch>('GET', batchPath(batchId)), [batchId]);
  const [cancelError, setCancelError] = useState<string | null>(null);
  const [cancelling, setCancelling] = useState(false);
  const [linksOffset, setLinksOffset] = useState(0);
  const b = batch.data;
  const live = !!b && !BATCH_ENDED.includes(b.status);

  useEffect(() => {
    if (!live) return;
    const timer = setInterval(() => {
      if (!document.hidden) void batch.reload();
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [live, batch.reload]);

  useEffect(() => {
    if (b) onUpdate(b);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [b]);

  // The credits change as items fail (refunded) and when the batch ends.
  useEffect(() => {
    if (b && (b.failed > 0 || !live)) void refreshAccount().catch(() => undefined);
  }, [b?.failed, live]);

  const failedItems = useItems(batchId, 'failed', b?.failed ?? 0, 0, 100);
  // Links are listed once the batch has ended: while it runs they would be read again on every poll.
  const links = useItems(
    batchId,
    'completed',
    b && b.output === 'links' && !live ? b.completed : 0,
    linksOffset,
    LINKS_PAGE,
  );

  const cancel = async () => {
    if (!b) return;
    const waiting = b.pending;
    const ok = await confirmAction({
      title: 'Cancel this batch?',
      message: `The ${plural(waiting, 'document')} not started yet will not be made, and their credits come back. Documents being made now are finished and kept.`,
      confirmLabel: 'Cancel batch',
      cancelLabel: 'Keep it running',
      danger: true,
    });
    if (!ok) return;
    setCancelling(true);
    setCancelError(null);
    try {
      batch.setData(await api().json<Batch>('POST', `${batchPath(batchId)}/cancel`));
      void refreshAccount().catch(() => undefined);
    } catch (error) {
      setCancelError(describeRefusal(error));
    } finally {
      setCancelling(false);
    }
  };

  if (!b) {
    return (
      <section class="card batch-watch" aria-label="Batch">
        {batch.error ? (
          <ErrorNotice>
            {batch.error.status === 404 ? `No batch ${batchId} in this account.` : batch.error.message}
          </ErrorNotice>
        ) : (
          <p class="muted">Loading batch…</p>
        )}
      </section>
    );
  }

  const finished = b.completed + b.failed + b.cancelled;
  return (
    <section class="card batch-watch" aria-labelledby="batch-title" data-testid="batch-watch" data-status={b.status}>
      <div class="panel-head">
        <h2 id="batch-title">
          Batch <code>{b.batch_id}</code>
        </h2>
        <span class={`badge badge-${b.status}`} data-testid="batch-status">
          {BATCH_STATUS_TEXT[b.status]}
        </span>
      </div>
      <p class="muted">
        <TemplateRef id={b.template_id} names={templateNames} /> ({b.version ? jobVersionText(b.version) : 'the draft'}
        ), {OUTPUT_TEXT[b.output]}, started {formatTime(b.created_at)}
        {b.completed_at ? `, ended ${formatTime(b.completed_at)}` : ''}.
      </p>
      <progress class="batch-progress" max={b.total} value={finished} aria-label="Documents done" />
      <p role="status" data-testid="batch-counts">
        {b.completed} of {b.total} made · {b.failed} failed · {b.cancelled} cancelled
        {live && b.status !== 'assembling'
          ? ` · ${b.estimated_seconds_left === null ? 'time left: known after two documents' : `about ${formatDuration(b.estimated_seconds_left)} left`}`
          : ''}
      </p>
      {live && (
        <div class="button-row">
          <button
            type="button"
            class="button button-danger"
            disabled={cancelling || b.status === 'assembling' || b.status === 'cancelling'}
            onClick={() => void cancel()}
          >
            {cancelling ? 'Cancelling…' : 'Cancel batch'}
          </button>
          <span class="muted">
            {b.pending > 0 ? `${plural(b.pending, 'document')} not started: cancelling refunds them.` : ''}
          </span>
        </div>
      )}
      <ErrorNotice>{cancelError}</ErrorNotice>
      <ErrorNotice>
        {batch.error ? `Could not read the batch's progress just now: ${batch.error.message}` : null}
      </ErrorNotice>
      <ErrorNotice>{b.error ? `${b.error.message} (${b.error.code})` : null}</ErrorNotice>
      {b.result && (
        <p class="notice notice-success" data-testid="batch-result">
          {b.result.url ? (
            <>
              Ready:{' '}
              <a href={b.result.url} download={b.result.filename} data-testid="batch-download">
                {b.result.filename}
              </a>
              {b.result.expires_at ? ` (the link works until ${formatTime(b.result.expires_at)})` : ''}
            </>
          ) : (
            <>
              In your bucket:{' '}
              <code>
                s3://{b.result.s3_bucket}/{b.result.s3_key}
              </code>
            </>
          )}
        </p>
      )}
      {b.status === 'cancelled' && (
        <p class="notice notice-info">
          Cancelled: {plural(b.cancelled, 'document')} not made and refunded
          {b.completed ? `; ${plural(b.completed, 'document')} made before are kept and charged` : ''}.
        </p>
      )}
      {(failedItems.data?.items.length ?? 0) > 0 && (
        <>
          <h3>Failed rows (refunded)</h3>
          <table class="table responsive-table" data-testid="failed-rows">
            <caption class="visually-hidden">Rows that failed, with their errors</caption>
            <thead>
              <tr>
                <th scope="col">Row</th>
                <th scope="col">File</th>
                <th scope="col">Error</th>
              </tr>
            </thead>
            <tbody>
              {failedItems.data!.items.map((item) => (
                <tr key={item.index}>
                  <td data-label="Row">{item.index + 1}</td>
                  <td data-label="File">{item.filename}</td>
                  <td data-label="Error" class="error-text">
                    {item.error ? `${item.error.message} (${item.error.code})` : '—'}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          {failedItems.data!.total > failedItems.data!.items.length && (
            <p class="muted">
              The first {failedItems.data!.items.length} of {failedItems.data!.total} failed rows.
            </p>
          )}
        </>
      )}
      {(links.data?.items.length ?? 0) > 0 && (
        <>
          <h3>Documents</h3>
          <ul class="file-list" data-testid="batch-links">
            {links.data!.items.map((item) => (
              <li key={item.index}>
                <span>Row {item.index + 1}:</span>{' '}
                {item.url ? (
                  <a href={item.url} download={item.filename}>
                    {item.filename}
                  </a>
                ) : (
                  <code>
                    s3://{item.s3_bucket}/{item.s3_key}
                  </code>
                )}
              </li>
            ))}
          </ul>
          <Pager
            total={links.data!.total}
            limit={LINKS_PAGE}
            offset={linksOffset}
            onOffset={setLinksOffset}
            label="Document pages"
          />
        </>
      )}
    </section>
  );
}
