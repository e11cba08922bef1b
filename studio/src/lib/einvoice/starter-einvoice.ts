/**
 * The starter "Invoice (Factur-X EN 16931)" (issue 16): a template whose sample data IS the e-invoice
 * (the model of docs/einvoice.md), so a run can send the same object as `data` and as
 * `einvoice.invoice` and the readable page shows what the XML says: seller, buyer, lines, the VAT
 * breakdown and the totals.
 *
 * Amounts: when the run attaches an e-invoice, the template prints the service's own figures
 * (`einvoice.totals`, the numbers written into the XML); the live preview has no e-invoice, so the
 * template computes the same sums from the lines itself there.
 */
import type { PageSetup } from '../api-types.js';
import { EXAMPLE_INVOICE } from './einvoice.js';

export const EINVOICE_STARTER_NAME = 'Invoice (Factur-X EN 16931)';

export const EINVOICE_STARTER_HTML = `{% set locale = "en-GB" %}
{% set units = {"HUR": "h", "H87": "pcs", "C62": "pcs", "DAY": "days", "MON": "months", "KGM": "kg", "MTR": "m", "LTR": "l", "LS": "lump sum"} %}
{% set vat_labels = {"S": "Standard rate", "Z": "Zero rated", "E": "Exempt", "AE": "Reverse charge", "K": "Intra-EU supply", "G": "Export outside the EU", "O": "Not subject to VAT"} %}
{#- The service's totals when this runs as an e-invoice; none in the preview (computed below). -#}
{% set service = einvoice.totals if einvoice is defined else none %}

<header class="parties">
  <div class="seller">
    <strong>{{ seller.trading_name | default(seller.name) }}</strong><br>
    {{ seller.address.line1 }}<br>
    {% if seller.address.line2 %}{{ seller.address.line2 }}<br>{% endif %}
    {{ seller.address.postal_code }} {{ seller.address.city }}, {{ seller.address.country_code }}
  </div>
  <div class="buyer">
    <span class="label">Bill to</span><br>
    <strong>{{ buyer.name }}</strong><br>
    {{ buyer.address.line1 }}<br>
    {% if buyer.address.line2 %}{{ buyer.address.line2 }}<br>{% endif %}
    {{ buyer.address.postal_code }} {{ buyer.address.city }}, {{ buyer.address.country_code }}
    {% if buyer.vat_id %}<br>VAT ID {{ buyer.vat_id }}{% endif %}
  </div>
</header>

<h1>{{ "Credit note" if type_code == "381" else "Invoice" }} {{ number }}</h1>
<table class="meta">
  <tr><th>Issue date</th><td>{{ issue_date | format_date("long") }}</td></tr>
  {% if delivery_date %}<tr><th>Delivery date</th><td>{{ delivery_date | format_date("long") }}</td></tr>{% endif %}
  {% if due_date %}<tr><th>Due date</th><td>{{ due_date | format_date("long") }}</td></tr>{% endif %}
  {% if buyer_reference %}<tr><th>Your reference</th><td>{{ buyer_reference }}</td></tr>{% endif %}
  {% if order_reference %}<tr><th>Order</th><td>{{ order_reference }}</td></tr>{% endif %}
  {% if contract_reference %}<tr><th>Contract</th><td>{{ contract_reference }}</td></tr>{% endif %}
</table>

<table class="lines">
  <thead><tr><th>#</th><th>Item</th><th class="num">Quantity</th><th class="num">Unit price</th><th class="num">VAT</th><th class="num">Amount</th></tr></thead>
  <tbody>
  {% set sums = namespace(lines=0, allowances=0, charges=0, tax=0) %}
  {% for line in lines %}
    {% set net = (service.lines[loop.index0] | float) if service else (line.quantity * line.net_price) | round(2) %}
    {% set sums.lines = sums.lines + net %}
    <tr>
      <td>{{ line.id }}</td>
      <td>{{ line.name }}{% if line.description %}<br><small>{{ line.description }}</small>{% endif %}</td>
      <td class="num">{{ line.quantity }} {{ units[line.unit_code] | default(line.unit_code) }}</td>
      <td class="num">{{ line.net_price | format_currency }}</td>
      <td class="num">{% if line.vat_rate is defined %}{{ line.vat_rate | float }} %{% endif %} <small>{{ line.vat_category }}</small></td>
      <td class="num">{{ net | format_currency }}</td>
    </tr>
  {% endfor %}
  {#- Document-level allowances and charges; "if" first, so the form does not ask for them. -#}
  {% if allowances %}{% for a in allowances %}
    {% set sums.allowances = sums.allowances + a.amount %}
    <tr class="adjustment"><td></td><td>{{ a.reason | default("Allowance") }}</td><td></td><td></td><td class="num">{% if a.vat_rate is defined %}{{ a.vat_rate | float }} %{% endif %} <small>{{ a.vat_category }}</small></td><td class="num">−{{ a.amount | format_currency }}</td></tr>
  {% endfor %}{% endif %}
  {% if charges %}{% for c in charges %}
    {% set sums.charges = sums.charges + c.amount %}
    <tr class="adjustment"><td></td><td>{{ c.reason | default("Charge") }}</td><td></td><td></td><td class="num">{% if c.vat_rate is defined %}{{ c.vat_rate | float }} %{% endif %} <small>{{ c.vat_category }}</small></td><td class="num">{{ c.amount | format_currency }}</td></tr>
  {% endfor %}{% endif %}
  </tbody>
</table>

{% macro vat_row(category, rate, taxable, tax) %}
  <tr><td>{{ vat_labels[category] | default(category) }} ({{ category }})</td><td class="num">{% if rate is not none and rate is defined %}{{ rate | float }} %{% endif %}</td><td class="num">{{ taxable | format_currency }}</td><td class="num">{{ tax | format_currency }}</td></tr>
{% endmacro %}
<div class="summary">
  <table class="vat">
    <thead><tr><th>VAT</th><th class="num">Rate</th><th class="num">Taxable</th><th class="num">VAT amount</th></tr></thead>
    <tbody>
    {% if service %}
      {% for group in service.vat %}{{ vat_row(group.category, group.rate, group.taxable, group.tax) }}{% endfor %}
    {% else %}
      {#- Per VAT category and rate: its lines, minus its allowances, plus its charges; VAT rounded per group (EN 16931). -#}
      {% for category in lines | map(attribute="vat_category") | unique %}
        {% for rate in lines | selectattr("vat_category", "eq", category) | map(attribute="vat_rate") | unique %}
          {% set group = namespace(taxable=0) %}
          {% for line in lines | selectattr("vat_category", "eq", category) | selectattr("vat_rate", "eq", rate) %}{% set group.taxable = group.taxable + (line.quantity * line.net_price) | round(2) %}{% endfor %}
          {% for a in (allowances or []) | selectattr("vat_category", "eq", category) | selectattr("vat_rate", "eq", rate) %}{% set group.taxable = group.taxable - a.amount %}{% endfor %}
          {% for c in (charges or []) | selectattr("vat_category", "eq", category) | selectattr("vat_rate", "eq", rate) %}{% set group.taxable = group.taxable + c.amount %}{% endfor %}
          {% set tax = (group.taxable * rate | default(0) / 100) | round(2) %}
          {% set sums.tax = sums.tax + tax %}
          {{ vat_row(category, rate, group.taxable, tax) }}
        {% endfor %}
      {% endfor %}
    {% endif %}
    </tbody>
  </table>

  {% set net_total = sums.lines - sums.allowances + sums.charges %}
  {% set prepaid = (prepaid_amount | float) if prepaid_amount else 0 %}
  {% set totals = service if service else {
    "line_total": sums.lines, "allowance_total": sums.allowances, "charge_total": sums.charges,
    "tax_exclusive": net_total, "tax_total": sums.tax, "tax_inclusive": net_total + sums.tax,
    "prepaid": prepaid, "amount_due": net_total + sums.tax - prepaid
  } %}
  <table class="totals">
    <tr><th>Sum of lines</th><td class="num">{{ totals.line_total | format_currency }}</td></tr>
    {% if allowances and allowances | length %}<tr><th>Allowances</th><td class="num">−{{ totals.allowance_total | format_currency }}</td></tr>{% endif %}
    {% if charges and charges | length %}<tr><th>Charges</th><td class="num">{{ totals.charge_total | format_currency }}</td></tr>{% endif %}
    <tr><th>Total without VAT</th><td class="num">{{ totals.tax_exclusive | format_currency }}</td></tr>
    <tr><th>VAT</th><td class="num">{{ totals.tax_total | format_currency }}</td></tr>
    <tr><th>Total with VAT</th><td class="num">{{ totals.tax_inclusive | format_currency }}</td></tr>
    {% if prepaid_amount %}<tr><th>Paid in advance</th><td class="num">−{{ totals.prepaid | format_currency }}</td></tr>{% endif %}
    <tr class="due"><th>Amount due</th><td class="num">{{ totals.amount_due | format_currency }}</td></tr>
  </table>
</div>

{% if notes %}{% for note in notes %}<p class="note">{{ note }}</p>{% endfor %}{% endif %}
{% if vat_exemption_reasons %}{% for reason in vat_exemption_reasons %}<p class="note">{{ vat_labels[reason.vat_category] | default(reason.vat_category) }}: {{ reason.reason }}</p>{% endfor %}{% endif %}

{% if payment %}
<section class="payment">
  <h2>Payment</h2>
  {% if payment.terms %}<p>{{ payment.terms }}</p>{% endif %}
  {% if payment.iban %}
  <p>
    {% if payment.account_name %}Account holder {{ payment.account_name }}<br>{% endif %}
    IBAN {{ payment.iban }}{% if payment.bic %} · BIC {{ payment.bic }}{% endif %}<br>
    Reference {{ payment.remittance_information | default(number) }}
  </p>
  {% endif %}
</section>
{% endif %}

<footer class="seller-details">
  {{ seller.name }}
  {% if seller.vat_id %} · VAT ID {{ seller.vat_id }}{% endif %}
  {% if seller.tax_number %} · Tax number {{ seller.tax_number }}{% endif %}
  {% if seller.legal_registration_id %} · {{ seller.legal_registration_id }}{% endif %}
  {% if seller.contact %}<br>{{ seller.contact.name }}{% if seller.contact.phone %} · {{ seller.contact.phone }}{% endif %}{% if seller.contact.email %} · {{ seller.contact.email }}{% endif %}{% endif %}
</footer>
`;

export const EINVOICE_STARTER_CSS = `body { font-family: sans-serif; font-size: 10pt; color: #222; }
.parties { display: flex; justify-content: space-between; gap: 2em; margin-bottom: 2em; }
.buyer { min-width: 40%; }
.label, small { color: #666; }
h1 { font-size: 18pt; color: #1f4fd1; margin: 0 0 0.5em; }
h2 { font-size: 11pt; margin: 1.5em 0 0.3em; }
table { border-collapse: collapse; }
th, td { padding: 4px 6px; text-align: left; vertical-align: top; }
.num { text-align: right; white-space: nowrap; }
.meta th { font-weight: normal; color: #666; padding-left: 0; }
.lines { width: 100%; margin-top: 1.5em; }
.lines thead th, .vat thead th { border-bottom: 1px solid #222; }
.lines tbody td { border-bottom: 1px solid #ddd; }
.adjustment td { color: #444; font-style: italic; }
.summary { display: flex; justify-content: space-between; align-items: flex-start; gap: 2em; margin-top: 1.5em; break-inside: avoid; }
.totals th { font-weight: normal; }
.totals .due th, .totals .due td { font-weight: bold; border-top: 1px solid #222; }
.note { color: #444; }
.seller-details { margin-top: 2em; padding-top: 0.5em; border-top: 1px solid #ddd; font-size: 8pt; color: #666; }
`;

/** The invoice itself: the same object goes as `data` and as `einvoice.invoice`. */
export const EINVOICE_STARTER_DATA: Record<string, unknown> = structuredClone(EXAMPLE_INVOICE);

export const EINVOICE_STARTER_PAGE: PageSetup = {
  format: 'A4',
  orientation: 'portrait',
  margin: { top: '20mm', right: '18mm', bottom: '20mm', left: '18mm' },
};
