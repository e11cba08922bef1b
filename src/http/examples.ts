/**
 * Request examples for the OpenAPI document: what `/docs` "Try it out" starts from. They fit together
 * on a fresh instance: create the invoice template from TEMPLATE_EXAMPLE, put its id where
 * EXAMPLE_TEMPLATE_ID stands, and every generation example renders it with matching data.
 * test/e2e/api/openapi-client.test.ts sends them as written (the id replaced) and checks the PDF text.
 */

/** A realistic template id (ids are account-specific, so no example can name a real one). */
export const EXAMPLE_TEMPLATE_ID = 'Xq3v9TbLm2Ra';

/** Data matching TEMPLATE_EXAMPLE's variables. */
export const INVOICE_DATA = {
  number: 'INV-0001',
  customer: { name: 'Ada Lovelace' },
  items: [
    { description: 'Analytical engine tuning', amount: 120 },
    { description: 'Punched cards (box)', amount: 30 },
  ],
  total: 150,
};

const INVOICE_HTML = [
  '<h1>Invoice {{ number }}</h1>',
  '<p>Bill to: {{ customer.name }}</p>',
  '<table>',
  '{% for item in items %}<tr><td>{{ item.description }}</td><td>{{ "%.2f"|format(item.amount) }}</td></tr>{% endfor %}',
  '</table>',
  '<p class="total">Total: {{ "%.2f"|format(total) }}</p>',
].join('\n');

/** POST /v1/templates: a small invoice. */
export const TEMPLATE_EXAMPLE = {
  name: 'Invoice',
  html: INVOICE_HTML,
  css: 'body { font-family: sans-serif; } h1 { color: #1a4d8f; } .total { font-weight: bold; }',
  sample_data: INVOICE_DATA,
  page: { format: 'A4', margin: { top: '20mm', bottom: '20mm' } },
};
