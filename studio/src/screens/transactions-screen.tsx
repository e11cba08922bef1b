/**
 * Transactions: the credit ledger, newest first, paged. Each row says what it was for: a template (by
 * name, linked), or the PDF tool a run paid for (`tool`; the type stays TemplateFox's PDFGEN).
 */
import { useEffect, useState } from 'preact/hooks';
import { api, refreshAccount } from '../api/session.js';
import type { TransactionList } from '../lib/api-types.js';
import { formatBalanceChange, formatTime } from '../lib/format.js';
import { ErrorNotice } from '../components/notice.js';
import { Pager } from '../components/pager.js';
import { useLoad } from '../components/use-load.js';
import { TemplateRef } from '../components/template-ref.js';
import { useTemplateNames } from '../components/use-template-names.js';
import { Link, paths } from '../router.js';

const PAGE_SIZE = 25;
const TYPE_LABELS: Record<string, string> = {
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

export function TransactionsScreen() {
  const [offset, setOffset] = useState(0);
  const templateNames = useTemplateNames();
  const list = useLoad(
    () => api().json<TransactionList>('GET', '/v1/account/transactions', { query: { limit: PAGE_SIZE, offset } }),
    [offset],
  );
  useEffect(() => {
    void refreshAccount().catch(() => undefined);
  }, []);

  return (
    <main class="screen" id="main">
      <div class="screen-head">
        <h1 tabIndex={-1}>Transactions</h1>
      </div>
      <ErrorNotice>{list.error?.message}</ErrorNotice>
      {list.data && list.data.transactions.length === 0 && <p class="empty">No transactions yet.</p>}
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
                <td data-label="For">
                  {tx.template_id ? (
                    <TemplateRef id={tx.template_id} names={templateNames} />
                  ) : tx.tool ? (
                    <Link href={paths.pdfTools}>{TOOL_LABELS[tx.tool] ?? `PDF tools: ${tx.tool}`}</Link>
                  ) : (
                    '—'
                  )}
                </td>
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
