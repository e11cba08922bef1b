/**
 * What the UBL builder writes where the CEN and XRechnung schematrons (run during development, README:
 * design) found the Invoice form wrong: a credit note must be a UBL CreditNote (BR-CL-01 checks
 * InvoiceTypeCode against the invoice codes of UNTDID 1001 only). The schematrons are not run here.
 */
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import {
  DIRECT_DEBIT_PAYMENT,
  NOT_SUBJECT_INVOICE,
  SAMPLE_INVOICE,
} from '../../../test/support/documents/einvoice-samples.js';
import type { Invoice } from '../invoice-schema.js';
import { computeTotals } from '../totals.js';
import { buildUblXml, isUblCreditNote } from './ubl-xml.js';

type Node = Record<string, any>;
const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', parseTagValue: false });
const ubl = (invoice: Invoice): Node => parser.parse(buildUblXml({ invoice, totals: computeTotals(invoice) })) as Node;

describe('UBL builder: Invoice or CreditNote by the type code (BT-3)', () => {
  it('380 (and the default) is an Invoice with InvoiceTypeCode, InvoiceLine, InvoicedQuantity and a header DueDate', () => {
    const doc = ubl(SAMPLE_INVOICE);
    expect(Object.keys(doc)).toEqual(['?xml', 'Invoice']);
    const inv = doc.Invoice as Node;
    expect(inv['@_xmlns']).toBe('urn:oasis:names:specification:ubl:schema:xsd:Invoice-2');
    expect(inv['cbc:InvoiceTypeCode']).toBe('380');
    expect(inv['cbc:DueDate']).toBe('2026-12-04');
    expect(inv['cac:PaymentMeans']['cbc:PaymentDueDate']).toBeUndefined();
    expect(inv['cac:InvoiceLine']).toHaveLength(3);
    expect(inv['cac:InvoiceLine'][0]['cbc:InvoicedQuantity']).toEqual({ '@_unitCode': 'HUR', '#text': '10' });
  });

  it('381 (credit note) is a CreditNote: its namespace, CreditNoteTypeCode, CreditNoteLine with CreditedQuantity', () => {
    const doc = ubl({ ...SAMPLE_INVOICE, type_code: '381' });
    expect(Object.keys(doc)).toEqual(['?xml', 'CreditNote']);
    const cn = doc.CreditNote as Node;
    expect(cn['@_xmlns']).toBe('urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2');
    expect(cn['cbc:CreditNoteTypeCode']).toBe('381');
    expect(cn['cbc:InvoiceTypeCode']).toBeUndefined();
    expect(cn['cac:InvoiceLine']).toBeUndefined();
    expect(cn['cac:CreditNoteLine']).toHaveLength(3);
    expect(cn['cac:CreditNoteLine'].map((l: Node) => l['cbc:CreditedQuantity'])).toEqual([
      { '@_unitCode': 'HUR', '#text': '10' },
      { '@_unitCode': 'H87', '#text': '3' },
      { '@_unitCode': 'H87', '#text': '2' },
    ]);
    expect(cn['cac:CreditNoteLine'][0]['cbc:InvoicedQuantity']).toBeUndefined();
    // Same amounts as the invoice: EN 16931 credit notes carry positive amounts, the type code says "credit".
    expect(cn['cac:LegalMonetaryTotal']['cbc:PayableAmount']['#text']).toBe('1460.21');
  });

  it('a CreditNote carries the due date (BT-9) in PaymentMeans/PaymentDueDate, after the means code (UBL 2.1 CreditNote has no DueDate)', () => {
    const cn = ubl({ ...SAMPLE_INVOICE, type_code: '381' }).CreditNote as Node;
    expect(cn['cbc:DueDate']).toBeUndefined();
    expect(Object.keys(cn['cac:PaymentMeans']).slice(0, 3)).toEqual([
      'cbc:PaymentMeansCode',
      'cbc:PaymentDueDate',
      'cbc:PaymentID',
    ]);
    expect(cn['cac:PaymentMeans']['cbc:PaymentDueDate']).toBe('2026-12-04');
  });

  it('the CreditNote elements keep the UBL 2.1 CreditNote schema order', () => {
    const cn = ubl({ ...SAMPLE_INVOICE, type_code: '381', contract_reference: 'CT-1' }).CreditNote as Node;
    expect(Object.keys(cn).filter((k) => !k.startsWith('@_'))).toEqual([
      'cbc:CustomizationID',
      'cbc:ProfileID',
      'cbc:ID',
      'cbc:IssueDate',
      'cbc:CreditNoteTypeCode',
      'cbc:Note',
      'cbc:DocumentCurrencyCode',
      'cbc:BuyerReference',
      'cac:OrderReference',
      'cac:ContractDocumentReference',
      'cac:AccountingSupplierParty',
      'cac:AccountingCustomerParty',
      'cac:Delivery',
      'cac:PaymentMeans',
      'cac:PaymentTerms',
      'cac:AllowanceCharge',
      'cac:TaxTotal',
      'cac:LegalMonetaryTotal',
      'cac:CreditNoteLine',
    ]);
  });

  it.each(['380', '384', '389', '386', '751'])('%s stays an Invoice', (code) => {
    expect(isUblCreditNote(code)).toBe(false);
    expect(Object.keys(ubl({ ...SAMPLE_INVOICE, type_code: code }))).toEqual(['?xml', 'Invoice']);
  });

  it('every credit-note code of UNTDID 1001 that UBL lists makes a CreditNote (381 is the one the model offers)', () => {
    for (const code of ['81', '83', '261', '262', '296', '308', '381', '396', '420', '458', '502', '503', '532'])
      expect(isUblCreditNote(code)).toBe(true);
    expect(isUblCreditNote(undefined)).toBe(false);
  });
});

describe('UBL builder: category O (not subject to VAT)', () => {
  const inv = ubl(NOT_SUBJECT_INVOICE).Invoice as Node;

  it('the breakdown carries rate 0 (UBL is XRechnung here: BR-DE-14 requires BT-119)', () => {
    expect(inv['cac:TaxTotal']['cac:TaxSubtotal']['cac:TaxCategory']).toEqual({
      'cbc:ID': 'O',
      'cbc:Percent': '0',
      'cbc:TaxExemptionReason': 'Not subject to VAT',
      'cac:TaxScheme': { 'cbc:ID': 'VAT' },
    });
    expect(inv['cac:TaxTotal']['cac:TaxSubtotal']['cbc:TaxAmount']['#text']).toBe('0.00');
  });

  it('lines and allowances carry no rate (BR-O-05, BR-O-06)', () => {
    for (const line of inv['cac:InvoiceLine'] as Node[])
      expect(line['cac:Item']['cac:ClassifiedTaxCategory']).toEqual({
        'cbc:ID': 'O',
        'cac:TaxScheme': { 'cbc:ID': 'VAT' },
      });
    expect(inv['cac:AllowanceCharge']['cac:TaxCategory']).toEqual({
      'cbc:ID': 'O',
      'cac:TaxScheme': { 'cbc:ID': 'VAT' },
    });
  });

  it('other categories keep their own rate in the breakdown', () => {
    const subtotals = (ubl(SAMPLE_INVOICE).Invoice as Node)['cac:TaxTotal']['cac:TaxSubtotal'] as Node[];
    expect(subtotals.map((s) => [s['cac:TaxCategory']['cbc:ID'], s['cac:TaxCategory']['cbc:Percent']])).toEqual([
      ['S', '19'],
      ['S', '7'],
    ]);
  });
});

describe('UBL builder: a direct debit with its mandate (BG-19)', () => {
  const invoice: Invoice = { ...SAMPLE_INVOICE, payment: DIRECT_DEBIT_PAYMENT };

  it('PaymentMandate with the mandate reference (BT-89) and the debited account (BT-91), no payee account', () => {
    const means = (ubl(invoice).Invoice as Node)['cac:PaymentMeans'] as Node;
    expect(means).toEqual({
      'cbc:PaymentMeansCode': '59',
      'cbc:PaymentID': 'RE-2026-0042',
      'cac:PaymentMandate': {
        'cbc:ID': 'MANDATE-2026-001',
        'cac:PayerFinancialAccount': { 'cbc:ID': 'DE75512108001245126199' },
      },
    });
  });

  it("the creditor id (BT-90) is the seller's SEPA party identification, between EndpointID and PostalAddress", () => {
    const seller = (ubl(invoice).Invoice as Node)['cac:AccountingSupplierParty']['cac:Party'] as Node;
    expect(seller['cac:PartyIdentification']).toEqual({
      'cbc:ID': { '@_schemeID': 'SEPA', '#text': 'DE98ZZZ09999999999' },
    });
    expect(Object.keys(seller).slice(0, 3)).toEqual(['cbc:EndpointID', 'cac:PartyIdentification', 'cac:PostalAddress']);
    const buyer = (ubl(invoice).Invoice as Node)['cac:AccountingCustomerParty']['cac:Party'] as Node;
    expect(buyer['cac:PartyIdentification']).toBeUndefined();
  });

  it('PaymentMandate follows a payee account (UBL 2.1 PaymentMeans order), and a credit note has it too', () => {
    const cn = ubl({
      ...invoice,
      type_code: '381',
      payment: { ...DIRECT_DEBIT_PAYMENT, iban: 'DE02120300000000202051' },
    }).CreditNote as Node;
    expect(Object.keys(cn['cac:PaymentMeans'])).toEqual([
      'cbc:PaymentMeansCode',
      'cbc:PaymentDueDate',
      'cbc:PaymentID',
      'cac:PayeeFinancialAccount',
      'cac:PaymentMandate',
    ]);
  });

  it('no mandate fields, no PaymentMandate and no party identification (the sample)', () => {
    const inv = ubl(SAMPLE_INVOICE).Invoice as Node;
    expect(inv['cac:PaymentMeans']['cac:PaymentMandate']).toBeUndefined();
    expect(inv['cac:AccountingSupplierParty']['cac:Party']['cac:PartyIdentification']).toBeUndefined();
  });
});

describe('UBL builder: accounts (BT-84, BT-91) in the XML', () => {
  it('an IBAN sent in its printed form (spaces, lower case) is written in electronic format; another account as sent', () => {
    const means = (invoice: Invoice) => (ubl(invoice).Invoice as Node)['cac:PaymentMeans'] as Node;
    expect(
      means({ ...SAMPLE_INVOICE, payment: { ...SAMPLE_INVOICE.payment!, iban: 'de89 3704 0044 0532 0130 00' } })[
        'cac:PayeeFinancialAccount'
      ]['cbc:ID'],
    ).toBe('DE89370400440532013000');
    const debit = means({
      ...SAMPLE_INVOICE,
      payment: { ...DIRECT_DEBIT_PAYMENT, debited_account: 'de75 5121 0800 1245 1261 99' },
    });
    expect(debit['cac:PaymentMandate']['cac:PayerFinancialAccount']['cbc:ID']).toBe('DE75512108001245126199');
    expect(
      means({ ...SAMPLE_INVOICE, payment: { ...SAMPLE_INVOICE.payment!, means_code: '30', iban: '0012 3456 78 x' } })[
        'cac:PayeeFinancialAccount'
      ]['cbc:ID'],
    ).toBe('0012 3456 78 x');
  });
});
