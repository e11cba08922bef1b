/**
 * What the failure drills share (test/e2e/drill-*.test.ts): the invoice template they
 * load the service with, and the ledger invariants they check.
 */
import type { Cluster } from './cluster.js';

export const INVOICE =
  '<h1>Invoice {{ number }}</h1><table>{% for i in range(0, 20) %}<tr><td>Line {{ i }}</td><td>{{ i * 3 }}.00</td></tr>{% endfor %}</table>';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Ledger invariants of one account: balance = −Σ credits, one PDFGEN per charge, refunds only of failed work. */
export async function ledgerOf(cluster: Cluster, accountId: string) {
  const txs = await cluster.db
    .selectFrom('credit_transactions')
    .selectAll()
    .where('account_id', '=', accountId)
    .execute();
  const account = await cluster.db
    .selectFrom('accounts')
    .select('credits')
    .where('id', '=', accountId)
    .executeTakeFirstOrThrow();
  return {
    balance: account.credits,
    sum: txs.reduce((s, x) => s + x.credits, 0),
    pdfgen: txs.filter((x) => x.transaction_type === 'PDFGEN'),
    refunds: txs.filter((x) => x.transaction_type === 'REFUND'),
  };
}
