/**
 * Transactions: the credit ledger, newest first, paged, filtered by type and by batch. Each row says
 * what it was for: a template (by name, linked) or the PDF tool a run paid for (`tool`; the type stays
 * TemplateFox's PDFGEN), and the background job or batch behind it; a refund says what it gives back
 * (`refunds`, `job_id`, `batch_id`).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, refreshAccount } from '../api/session.js';
import type { Batch, Transaction, TransactionList } from '../lib/api-types.js';
import { formatBalanceChange, formatTime } from '../lib/format.js';
import { ErrorNotice } from '../components/notice.js';
import { Pager } from '../components/pager.js';
import { useLoad } from '../components/use-load.js';
import { TemplateRef } from '../components/template-ref.js';
import { useTemplateNames } from '../components/use-template-names.js';
import { Link, paths } from '../router.js';

const PAGE_SIZE = 25;
const TYPE_LABELS: Record<Transaction['transaction_type'], string> = {
  PDFGEN: 'Generation',
  REFUND: 'Refund',
  PURCHASE: 'Purchase',
  BONUS: 'Bonus',
};
const TOOL_LABELS: Record<string, string> = {
  merge: 'PDF tools: merge',
  'extract-pages': 'PDF tools: extract pages',
  rotate: 'PDF tools: rotate',
};
const GRANT_TEXT: Record<string, string> = { PURCHASE: 'Credits bought', BONUS: 'Credits given' };

export function TransactionsScreen() {
  const [offset, setOffset] = useState(0);
  const [type, setType] = useState<Transaction['transaction_type'] | ''>('');
  const [batchId, setBatchId] = useState('');
  const templateNames = useTemplateNames();
  const batches = useLoad(
    async () => (await api().json<{ batches: Batch[] }>('GET', '/v1/pdf/batches', { query: { limit: 100 } })).batches,
    [],
  );
  const list = useLoad(
    () =>
      api().json<TransactionList>('GET', '/v1/account/transactions', {
        query: { limit: PAGE_SIZE, offset, type: type || undefined, batch_id: batchId || undefined },
      }),
    [offset, type, batchId],
  );
  useEffect(() => {
    void refreshAccount().catch(() => undefined);
  }, []);
  const filterBatch = (id: string) => {
    setBatchId(id);
    setOffset(0);
  };

  /** What a row is about: the template or tool it paid for (for a refund: the charge it gives back), and the job or batch. */
  const about = (tx: Transaction) => {
    const subject = tx.transaction_type === 'REFUND' ? tx.refunds : tx;
    const what = subject?.template_id ? (
      <TemplateRef id={subject.template_id} names={templateNames} />
    ) : subject?.tool ? (
      <Link href={paths.pdfTools}>{TOOL_LABELS[subject.tool] ?? `PDF tools: ${subject.tool}`}</Link>
    ) : null;
    const where = tx.batch_id ? (
      <>
        a document of batch{' '}
        <button
          type="button"
          class="link-button"
          onClick={() => filterBatch(tx.batch_id!)}
          title="Show only this batch's transactions"
        >
          <code>{tx.batch_id}</code>
        </button>
      </>
    ) : tx.job_id ? (
      <>
        background job <code>{tx.job_id}</code>
      </>
    ) : null;
    if (tx.transaction_type === 'REFUND') {
      return (
        <span data-testid="refund-of">
          Refund of {what ?? 'a generation'}
          {where && <> ({where})</>}
        </span>
      );
    }
    if (tx.transaction_type !== 'PDFGEN') return GRANT_TEXT[tx.transaction_type] ?? '—';
    if (!what && !where) return '—';
    return (
      <span>
        {what}
        {what && where ? ', ' : ''}
        {where}
      </span>
    );
  };

  return (
    <main class="screen" id="main">
      <div class="screen-head">
        <h1 tabIndex={-1}>Transactions</h1>
      </div>
      <div class="toolbar">
        <label class="field field-inline">
          <span class="field-label">Type</span>
          <select
            value={type}
            onChange={(e) => {
              setType(e.currentTarget.value as Transaction['transaction_type'] | '');
              setOffset(0);
            }}
          >
            <option value="">All</option>
            {(Object.keys(TYPE_LABELS) as Transaction['transaction_type'][]).map((t) => (
              <option key={t} value={t}>
                {TYPE_LABELS[t]}
              </option>
            ))}
          </select>
        </label>
        <label class="field field-inline">
          <span class="field-label">Batch</span>
          <select value={batchId} onChange={(e) => filterBatch(e.currentTarget.value)}>
            <option value="">All</option>
            {/* A batch chosen from a row may be older than the recent ones listed. */}
            {batchId && !batches.data?.some((b) => b.batch_id === batchId) && (
              <option value={batchId}>{batchId}</option>
            )}
            {batches.data?.map((b) => (
              <option key={b.batch_id} value={b.batch_id}>
                {templateNames.get(b.template_id) ?? b.template_id}, {formatTime(b.created_at)} ({b.total} documents)
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorNotice>{list.error?.message}</ErrorNotice>
      {list.data && list.data.transactions.length === 0 && (
        <p class="empty">{type || batchId ? 'No transactions match these filters.' : 'No transactions yet.'}</p>
      )}
      {list.data && list.data.transactions.length > 0 && (
        <table class="table responsive-table">
          <caption class="visually-hidden">Credit transactions</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Type</th>
              <th scope="col" class="numeric">
                Credits
              </th>
              <th scope="col">For</th>
              <th scope="col" class="numeric">
                Time
              </th>
              <th scope="col">Reference</th>
            </tr>
          </thead>
          <tbody>
            {list.data.transactions.map((tx) => (
              <tr key={tx.transaction_ref}>
                <td data-label="When">{formatTime(tx.created_at)}</td>
                <td data-label="Type">
                  <span class={`badge badge-tx-${tx.transaction_type.toLowerCase()}`}>
                    {TYPE_LABELS[tx.transaction_type] ?? tx.transaction_type}
                  </span>
                </td>
                <td data-label="Credits" class={`numeric ${tx.credits > 0 ? 'debit' : 'credit'}`}>
                  {formatBalanceChange(tx.credits)}
                </td>
                <td data-label="For">{about(tx)}</td>
                <td data-label="Time" class="numeric">
                  {tx.exec_tm != null ? `${tx.exec_tm} ms` : '—'}
                </td>
                <td data-label="Reference">
                  <code class="ref">{tx.transaction_ref}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.data && (
        <Pager
          total={list.data.total}
          limit={PAGE_SIZE}
          offset={offset}
          onOffset={setOffset}
          label="Transaction pages"
        />
      )}
    </main>
  );
}
