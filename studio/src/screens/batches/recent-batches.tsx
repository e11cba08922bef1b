/**
 * The account's recent batches, newest first (GET /v1/pdf/batches) with the template version each
 * renders, each opening its live view. The batch being watched shows its latest state from that view;
 * the list reads again when the watched batch changes status, and every 5 s while another listed batch
 * still runs.
 */
import { useEffect, useState } from 'preact/hooks';
import { api } from '../../api/session.js';
import { BATCH_ENDED, type Batch, type BatchList } from '../../lib/api-types.js';
import { formatTime, jobVersionText } from '../../lib/format.js';
import { ErrorNotice } from '../../components/notice.js';
import { Pager } from '../../components/pager.js';
import { TemplateRef } from '../../components/template-ref.js';
import { useLoad } from '../../components/use-load.js';
import { Link, paths } from '../../router.js';
import { BATCH_STATUS_TEXT, OUTPUT_TEXT } from './batch-watch.js';

const PAGE_SIZE = 10;
const POLL_MS = 5000;

export function RecentBatches({
  watched,
  templateNames,
}: {
  watched: Batch | null;
  templateNames: Map<string, string>;
}) {
  const [offset, setOffset] = useState(0);
  const list = useLoad(
    () => api().json<BatchList>('GET', '/v1/pdf/batches', { query: { limit: PAGE_SIZE, offset } }),
    [offset, watched?.batch_id, watched?.status],
  );
  const rows = (list.data?.batches ?? []).map((b) => (b.batch_id === watched?.batch_id ? watched : b));
  const othersLive = rows.some((b) => b.batch_id !== watched?.batch_id && !BATCH_ENDED.includes(b.status));

  useEffect(() => {
    if (!othersLive) return;
    const timer = setInterval(() => {
      if (!document.hidden) void list.reload();
    }, POLL_MS);
    return () => clearInterval(timer);
  }, [othersLive, list.reload]);

  return (
    <section aria-labelledby="recent-batches-title" class="recent-batches">
      <div class="toolbar">
        <h2 id="recent-batches-title">Recent batches</h2>
        <button type="button" class="button button-small" onClick={() => list.reload()}>
          Refresh
        </button>
      </div>
      <ErrorNotice>{list.error?.message}</ErrorNotice>
      {list.data && rows.length === 0 && <p class="empty">No batches yet. Start one above.</p>}
      {rows.length > 0 && (
        <table class="table responsive-table" data-testid="recent-batches">
          <caption class="visually-hidden">Recent batches</caption>
          <thead>
            <tr>
              <th scope="col">Batch</th>
              <th scope="col">Status</th>
              <th scope="col">Template</th>
              <th scope="col">Version</th>
              <th scope="col">Output</th>
              <th scope="col">Documents</th>
              <th scope="col">Started</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((b) => (
              <tr key={b.batch_id} aria-current={b.batch_id === watched?.batch_id || undefined}>
                <td data-label="Batch">
                  <Link href={paths.batch(b.batch_id)}>
                    <code>{b.batch_id}</code>
                  </Link>
                </td>
                <td data-label="Status">
                  <span class={`badge badge-${b.status}`}>{BATCH_STATUS_TEXT[b.status]}</span>
                </td>
                <td data-label="Template">
                  <TemplateRef id={b.template_id} names={templateNames} />
                </td>
                <td data-label="Version">{b.version ? jobVersionText(b.version) : 'draft'}</td>
                <td data-label="Output">{OUTPUT_TEXT[b.output]}</td>
                <td data-label="Documents">
                  {b.completed}/{b.total}
                  {b.failed ? `, ${b.failed} failed` : ''}
                  {b.cancelled ? `, ${b.cancelled} cancelled` : ''}
                </td>
                <td data-label="Started">{formatTime(b.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.data && (
        <Pager total={list.data.total} limit={PAGE_SIZE} offset={offset} onOffset={setOffset} label="Batch pages" />
      )}
    </section>
  );
}
