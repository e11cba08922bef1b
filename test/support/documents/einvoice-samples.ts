/**
 * The issue's reference invoice: 3 lines at 19 % and 7 % VAT and a document-level allowance, with
 * everything XRechnung needs, and its totals computed by hand (the tests compare the XML with these).
 */
import type { Invoice } from '../../../src/einvoice/invoice-schema.js';

export const SAMPLE_INVOICE: Invoice = {
  number: 'RE-2026-0042',
  issue_date: '2026-11-20',
  due_date: '2026-12-04',
  delivery_date: '2026-11-18',
  currency: 'EUR',
  buyer_reference: '04011000-12345-67',
  order_reference: 'PO-7781',
  notes: ['Thank you for your order.'],
  seller: {
    name: 'Druckerei Beispiel GmbH',
    vat_id: 'DE123456789',
    legal_registration_id: 'HRB 12345',
    address: { line1: 'Hauptstraße 1', city: 'Berlin', postal_code: '10115', country_code: 'DE' },
    electronic_address: { scheme: 'EM', value: 'billing@druckerei.example' },
    contact: { name: 'Erika Muster', phone: '+49 30 1234567', email: 'erika@druckerei.example' },
  },
  buyer: {
    name: 'Stadtverwaltung Musterstadt',
    address: { line1: 'Rathausplatz 2', city: 'Musterstadt', postal_code: '12345', country_code: 'DE' },
    electronic_address: { scheme: '0204', value: '04011000-12345-67' },
  },
  lines: [
    {
      id: '1',
      name: 'Layout consulting',
      quantity: 10,
      unit_code: 'HUR',
      net_price: 120,
      vat_category: 'S',
      vat_rate: 19,
    },
    {
      id: '2',
      name: 'Printed handbook',
      quantity: 3,
      unit_code: 'H87',
      net_price: 24.9,
      vat_category: 'S',
      vat_rate: 7,
    },
    { id: '3', name: 'Shipping box', quantity: 2, unit_code: 'H87', net_price: 4.95, vat_category: 'S', vat_rate: 19 },
  ],
  allowances: [{ amount: 50, reason: 'Loyalty discount', reason_code: '95', vat_category: 'S', vat_rate: 19 }],
  payment: {
    means_code: '58',
    iban: 'DE02120300000000202051',
    bic: 'BYLADEM1001',
    account_name: 'Druckerei Beispiel GmbH',
    remittance_information: 'RE-2026-0042',
    terms: 'Payable within 14 days without deduction.',
  },
};

/**
 * By hand: 19 %: 1200.00 + 9.90 − 50.00 = 1159.90, VAT 220.381 → 220.38; 7 %: 74.70, VAT 5.229 → 5.23.
 * Lines 1284.60, allowances 50.00, without VAT 1234.60, VAT 225.61, with VAT 1460.21, due 1460.21.
 */
export const SAMPLE_TOTALS = {
  lineTotal: '1284.60',
  allowanceTotal: '50.00',
  taxExclusive: '1234.60',
  taxTotal: '225.61',
  taxInclusive: '1460.21',
  amountDue: '1460.21',
  vat: [
    { rate: '19', basis: '1159.90', tax: '220.38' },
    { rate: '7', basis: '74.70', tax: '5.23' },
  ],
};

/**
 * The sample invoice not subject to VAT (category O, BR-O-*): every line and the allowance in O without
 * a rate, the exemption reason, and a seller with a tax number instead of a VAT id (BR-O-02).
 */
export const NOT_SUBJECT_INVOICE: Invoice = (() => {
  const { vat_id: _, ...seller } = SAMPLE_INVOICE.seller;
  return {
    ...SAMPLE_INVOICE,
    seller: { ...seller, tax_number: '201/113/40209' },
    lines: SAMPLE_INVOICE.lines.map(({ vat_rate: _rate, ...line }) => ({ ...line, vat_category: 'O' })),
    allowances: [{ amount: 50, reason: 'Loyalty discount', reason_code: '95', vat_category: 'O' }],
    vat_exemption_reasons: [{ vat_category: 'O', reason: 'Not subject to VAT' }],
  };
})();

/**
 * Payment by SEPA direct debit (59) with its mandate (BG-19), as XRechnung needs it: mandate reference
 * (BT-89), the seller's SEPA creditor id (BT-90), the buyer's IBAN (BT-91); no payee account (BR-DE-25-b).
 */
export const DIRECT_DEBIT_PAYMENT: NonNullable<Invoice['payment']> = {
  means_code: '59',
  mandate_reference: 'MANDATE-2026-001',
  creditor_id: 'DE98ZZZ09999999999',
  debited_account: 'DE75512108001245126199',
  remittance_information: 'RE-2026-0042',
  terms: 'The amount is debited on the due date.',
};
