/**
 * The report fixture's template with its one ledger table written as consecutive tables of `rows` rows
 * each — the pattern docs/long-documents.md "Long tables" recommends for a table of thousands of rows:
 * `{% for chunk in rows | batch(K) %}<table>…{% endfor %}`. Each table has the same header; the footer
 * goes on the last; row numbers continue across the tables. Used by the long-document test and by
 * bench/costs/print-layout-cost.ts, which measure the same template.
 */
export function splitLedger(template: string, rows: number): string {
  const split = template.replace(/<table class="ledger">([\s\S]*?)<\/table>/, (_all, inner: string) => {
    const [head, rest] = inner.split('<tbody>') as [string, string];
    const [body, foot] = rest.split('</tbody>') as [string, string];
    const rowsOfChunk = body
      .replace('{% for row in rows %}', '{% for row in chunk %}')
      .replace('{{ loop.index }}', '{{ base + loop.index }}');
    return `{% for chunk in rows | batch(${rows}) %}{% set base = loop.index0 * ${rows} %}{% set lastChunk = loop.last %}<table class="ledger">${head}<tbody>${rowsOfChunk}</tbody>{% if lastChunk %}${foot}{% endif %}</table>{% endfor %}`;
  });
  if (split === template || !split.includes('base + loop.index'))
    throw new Error('the report template has changed: its ledger table was not found');
  return split;
}
