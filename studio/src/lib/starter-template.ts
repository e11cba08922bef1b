/**
 * What a new template starts with: a blank page, a small invoice that shows variables, a loop and a
 * condition, or (for PDF templates) the e-invoice starter of starter-einvoice.ts.
 */
import type { PageSetup } from './api-types.js';
import {
  EINVOICE_STARTER_CSS,
  EINVOICE_STARTER_DATA,
  EINVOICE_STARTER_HTML,
  EINVOICE_STARTER_NAME,
  EINVOICE_STARTER_PAGE,
} from './einvoice/starter-einvoice.js';

export const STARTER_HTML = `<h1>Invoice {{ invoice.number }}</h1>
<p>Billed to <strong>{{ customer.name }}</strong></p>
<table>
  <thead><tr><th>Item</th><th>Qty</th><th>Price</th></tr></thead>
  <tbody>
  {% for item in items %}
    <tr><td>{{ item.description }}</td><td>{{ item.qty }}</td><td>{{ item.price | format_currency("EUR") }}</td></tr>
  {% endfor %}
  </tbody>
</table>
{% if paid %}<p class="paid">Paid — thank you!</p>{% endif %}
`;

export const STARTER_CSS = `body { font-family: sans-serif; color: #222; }
h1 { color: #1f4fd1; }
table { width: 100%; border-collapse: collapse; }
th, td { border-bottom: 1px solid #ddd; padding: 6px; text-align: left; }
.paid { color: #107a3e; font-weight: bold; }
`;

export const STARTER_DATA: Record<string, unknown> = {
  invoice: { number: 'INV-001' },
  customer: { name: 'Ada Lovelace' },
  items: [
    { description: 'Analytical engine tuning', qty: 2, price: 120 },
    { description: 'Punch cards', qty: 100, price: 0.5 },
  ],
  paid: true,
};

export const STARTER_PAGE: PageSetup = {
  format: 'A4',
  orientation: 'portrait',
  margin: { top: '20mm', right: '15mm', bottom: '20mm', left: '15mm' },
};

export type PdfStarterId = 'blank' | 'example' | 'einvoice';

/** A blank page: nothing to delete first, no example data to carry along. */
export const BLANK_HTML = '<h1></h1>\n';

/** The PDF starters the "New template" dialog offers: the parts of the template it creates. */
export const PDF_STARTERS: {
  id: PdfStarterId;
  label: string;
  help: string;
  html: string;
  css: string;
  sample_data: Record<string, unknown>;
  page: PageSetup;
}[] = [
  {
    id: 'blank',
    label: 'Blank page',
    help: 'It starts empty: no example text or data. Write the HTML, and the form follows the variables you use.',
    html: BLANK_HTML,
    css: '',
    sample_data: {},
    page: STARTER_PAGE,
  },
  {
    id: 'example',
    label: 'Small example',
    help: 'It starts as a small invoice example you can edit.',
    html: STARTER_HTML,
    css: STARTER_CSS,
    sample_data: STARTER_DATA,
    page: STARTER_PAGE,
  },
  {
    id: 'einvoice',
    label: EINVOICE_STARTER_NAME,
    help: 'An invoice whose data is an EN 16931 e-invoice: Run can attach the same data as Factur-X, ZUGFeRD or XRechnung.',
    html: EINVOICE_STARTER_HTML,
    css: EINVOICE_STARTER_CSS,
    sample_data: EINVOICE_STARTER_DATA,
    page: EINVOICE_STARTER_PAGE,
  },
];

/** What a new image template starts with: a card whose parts are layers (`data-layer`) to modify per render. */
export const STARTER_IMAGE_HTML = `<div class="card" data-layer="card">
  <h1 data-layer="headline">{{ title }}</h1>
  <p data-layer="subtitle">Made with Pressroom</p>
</div>
`;

export const STARTER_IMAGE_CSS = `body { margin: 0; font-family: sans-serif; }
.card { box-sizing: border-box; width: 100vw; height: 100vh; padding: 8%; background: #1f4fd1; color: #fff; }
h1 { font-size: 12vw; margin: 0 0 0.2em; }
p { font-size: 5vw; margin: 0; }
`;

export const STARTER_IMAGE_DATA = { title: 'Hello' };

export const DEFAULT_CANVAS = { width: 1080, height: 1080 };
