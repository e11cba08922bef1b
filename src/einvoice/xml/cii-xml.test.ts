/**
 * What the CII builder writes per Factur-X profile where the profile's own schematron (Factur-X 1.07.3)
 * is stricter than its XSD: elements the XSD admits but the schematron reports as "not used" in that
 * profile. The schematron itself is not run here (README, design: it was run during development).
 */
import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import {
  DIRECT_DEBIT_PAYMENT,
  NOT_SUBJECT_INVOICE,
  SAMPLE_INVOICE,
} from '../../../test/support/documents/einvoice-samples.js';
import { buildCiiXml } from './cii-xml.js';
import type { EInvoiceProfile, Invoice } from '../invoice-schema.js';
import { computeTotals } from '../totals.js';

type Node = Record<string, any>;
const parser = new XMLParser({ ignoreAttributes: false, removeNSPrefix: true });

/** The parsed supply chain trade transaction of the XML built for the invoice in the profile. */
function transaction(invoice: Invoice, profile: EInvoiceProfile | 'xrechnung'): Node {
  const xml = buildCiiXml({ invoice, totals: computeTotals(invoice), profile });
  return parser.parse(xml).CrossIndustryInvoice.SupplyChainTradeTransaction as Node;
}
const agreement = (invoice: Invoice, profile: EInvoiceProfile | 'xrechnung') =>
  transaction(invoice, profile).ApplicableHeaderTradeAgreement as Node;

describe('CII builder: what each Factur-X profile may carry', () => {
  const invoice: Invoice = {
    ...SAMPLE_INVOICE,
    seller: { ...SAMPLE_INVOICE.seller, trading_name: 'Beispiel Druck' },
    buyer: { ...SAMPLE_INVOICE.buyer, trading_name: 'Stadt Muster' },
  };

  it.each(['basic-wl', 'basic'] as const)(
    '%s: the seller trading name (BT-28) but no buyer trading name (BT-45)',
    (profile) => {
      const a = agreement(invoice, profile);
      expect(a.SellerTradeParty.SpecifiedLegalOrganization).toEqual({
        ID: 'HRB 12345',
        TradingBusinessName: 'Beispiel Druck',
      });
      // The sample buyer has no legal registration id, so no SpecifiedLegalOrganization at all (not an empty one).
      expect(a.BuyerTradeParty.SpecifiedLegalOrganization).toBeUndefined();
      expect(a.BuyerTradeParty.Name).toBe('Stadtverwaltung Musterstadt');
    },
  );

  it('basic: a buyer legal registration id is kept without the trading name', () => {
    const a = agreement({ ...invoice, buyer: { ...invoice.buyer, legal_registration_id: 'HRB 999' } }, 'basic');
    expect(a.BuyerTradeParty.SpecifiedLegalOrganization).toEqual({ ID: 'HRB 999' });
  });

  it.each(['en16931', 'extended', 'xrechnung'] as const)('%s: both trading names', (profile) => {
    const a = agreement(invoice, profile);
    expect(a.SellerTradeParty.SpecifiedLegalOrganization.TradingBusinessName).toBe('Beispiel Druck');
    expect(a.BuyerTradeParty.SpecifiedLegalOrganization).toEqual({ TradingBusinessName: 'Stadt Muster' });
  });

  it('minimum: neither trading name', () => {
    const a = agreement(invoice, 'minimum');
    expect(a.SellerTradeParty.SpecifiedLegalOrganization).toEqual({ ID: 'HRB 12345' });
    expect(a.BuyerTradeParty.SpecifiedLegalOrganization).toBeUndefined();
  });
});

describe('CII builder: the deliver-to party (BG-13 / BG-15)', () => {
  const deliverTo = {
    name: 'Entrepôt Lyon',
    address: { line1: '5 rue du Port', city: 'Lyon', postal_code: '69002', country_code: 'FR' },
  };

  it.each(['basic-wl', 'basic', 'en16931', 'extended', 'xrechnung'] as const)(
    '%s: ShipToTradeParty before the delivery date (BR-IC-12 needs its country)',
    (profile) => {
      const delivery = transaction({ ...SAMPLE_INVOICE, deliver_to: deliverTo }, profile)
        .ApplicableHeaderTradeDelivery as Node;
      expect(Object.keys(delivery)).toEqual(['ShipToTradeParty', 'ActualDeliverySupplyChainEvent']);
      expect(delivery.ShipToTradeParty).toEqual({
        Name: 'Entrepôt Lyon',
        PostalTradeAddress: { PostcodeCode: 69002, LineOne: '5 rue du Port', CityName: 'Lyon', CountryID: 'FR' },
      });
    },
  );

  it('a country alone is a complete deliver-to address; without a delivery date only the party is written', () => {
    const { delivery_date: _, ...invoice } = SAMPLE_INVOICE;
    const delivery = transaction({ ...invoice, deliver_to: { address: { country_code: 'FR' } } }, 'en16931')
      .ApplicableHeaderTradeDelivery as Node;
    expect(delivery).toEqual({ ShipToTradeParty: { PostalTradeAddress: { CountryID: 'FR' } } });
  });

  it('minimum: no delivery content (the profile has none)', () => {
    const delivery = transaction({ ...SAMPLE_INVOICE, deliver_to: deliverTo }, 'minimum').ApplicableHeaderTradeDelivery;
    expect(delivery).toBe('');
  });
});

describe('CII builder: the business process (BT-23)', () => {
  const context = (profile: EInvoiceProfile | 'xrechnung') =>
    parser.parse(buildCiiXml({ invoice: SAMPLE_INVOICE, totals: computeTotals(SAMPLE_INVOICE), profile }))
      .CrossIndustryInvoice.ExchangedDocumentContext as Node;

  it('XRechnung carries it before the specification identifier (XRechnung 3.0.2: PEPPOL-EN16931-R001)', () => {
    const c = context('xrechnung');
    expect(Object.keys(c)).toEqual([
      'BusinessProcessSpecifiedDocumentContextParameter',
      'GuidelineSpecifiedDocumentContextParameter',
    ]);
    expect(c.BusinessProcessSpecifiedDocumentContextParameter).toEqual({
      ID: 'urn:fdc:peppol.eu:2017:poacc:billing:01:1.0',
    });
  });

  it.each(['minimum', 'basic-wl', 'basic', 'en16931', 'extended'] as const)('Factur-X %s leaves it out', (profile) => {
    expect(Object.keys(context(profile))).toEqual(['GuidelineSpecifiedDocumentContextParameter']);
  });
});

describe('CII builder: category O (not subject to VAT) and the breakdown rate (BT-119)', () => {
  const settlement = (profile: EInvoiceProfile | 'xrechnung') =>
    transaction(NOT_SUBJECT_INVOICE, profile).ApplicableHeaderTradeSettlement as Node;

  it('XRechnung writes rate 0 in the O breakdown (XRechnung BR-DE-14 requires BT-119)', () => {
    expect(settlement('xrechnung').ApplicableTradeTax).toEqual({
      CalculatedAmount: 0,
      TypeCode: 'VAT',
      ExemptionReason: 'Not subject to VAT',
      BasisAmount: 1234.6,
      CategoryCode: 'O',
      RateApplicablePercent: 0,
    });
  });

  it.each(['basic-wl', 'basic', 'en16931', 'extended'] as const)(
    'Factur-X %s leaves it out (EN 16931: not subject to VAT has no rate, BR-48)',
    (profile) => {
      const tax = settlement(profile).ApplicableTradeTax as Node;
      expect(tax.CategoryCode).toBe('O');
      expect(tax).not.toHaveProperty('RateApplicablePercent');
    },
  );

  it('lines and allowances never carry a rate for O, XRechnung included (BR-O-05, BR-O-06)', () => {
    const t = transaction(NOT_SUBJECT_INVOICE, 'xrechnung');
    for (const line of t.IncludedSupplyChainTradeLineItem as Node[])
      expect(line.SpecifiedLineTradeSettlement.ApplicableTradeTax).toEqual({ TypeCode: 'VAT', CategoryCode: 'O' });
    expect(t.ApplicableHeaderTradeSettlement.SpecifiedTradeAllowanceCharge.CategoryTradeTax).toEqual({
      TypeCode: 'VAT',
      CategoryCode: 'O',
    });
  });
});

describe('CII builder: a direct debit with its mandate (BG-19)', () => {
  const invoice: Invoice = { ...SAMPLE_INVOICE, payment: DIRECT_DEBIT_PAYMENT };

  it.each(['basic-wl', 'basic', 'en16931', 'extended', 'xrechnung'] as const)(
    '%s: creditor id (BT-90), debited account (BT-91), mandate reference (BT-89) where D16B puts them',
    (profile) => {
      const s = transaction(invoice, profile).ApplicableHeaderTradeSettlement as Node;
      expect(Object.keys(s)[0]).toBe('CreditorReferenceID');
      expect(s.CreditorReferenceID).toBe('DE98ZZZ09999999999');
      expect(s.SpecifiedTradeSettlementPaymentMeans).toEqual({
        TypeCode: 59,
        PayerPartyDebtorFinancialAccount: { IBANID: 'DE75512108001245126199' },
      });
      expect(Object.keys(s.SpecifiedTradePaymentTerms)).toEqual([
        'Description',
        'DueDateDateTime',
        'DirectDebitMandateID',
      ]);
      expect(s.SpecifiedTradePaymentTerms.DirectDebitMandateID).toBe('MANDATE-2026-001');
    },
  );

  it('the debited account precedes a payee account in the payment means (D16B order)', () => {
    const s = transaction(
      { ...invoice, payment: { ...DIRECT_DEBIT_PAYMENT, iban: 'DE02120300000000202051' } },
      'en16931',
    ).ApplicableHeaderTradeSettlement as Node;
    expect(Object.keys(s.SpecifiedTradeSettlementPaymentMeans)).toEqual([
      'TypeCode',
      'PayerPartyDebtorFinancialAccount',
      'PayeePartyCreditorFinancialAccount',
    ]);
  });

  it('a mandate reference alone still gives payment terms to carry it', () => {
    const { due_date: _, ...noDue } = invoice;
    const { terms: _t, ...payment } = DIRECT_DEBIT_PAYMENT;
    const s = transaction({ ...noDue, payment }, 'en16931').ApplicableHeaderTradeSettlement as Node;
    expect(s.SpecifiedTradePaymentTerms).toEqual({ DirectDebitMandateID: 'MANDATE-2026-001' });
  });

  it('minimum: no payment content at all (the profile has none)', () => {
    const s = transaction(invoice, 'minimum').ApplicableHeaderTradeSettlement as Node;
    expect(Object.keys(s)).toEqual(['InvoiceCurrencyCode', 'SpecifiedTradeSettlementHeaderMonetarySummation']);
  });
});

describe('CII builder: accounts (BT-84, BT-91) in the XML', () => {
  const settlement = (invoice: Invoice) =>
    (transaction(invoice, 'en16931').ApplicableHeaderTradeSettlement as Node)
      .SpecifiedTradeSettlementPaymentMeans as Node;

  it('an IBAN sent in its printed form (spaces, lower case) is written in electronic format', () => {
    const payee = settlement({
      ...SAMPLE_INVOICE,
      payment: { ...SAMPLE_INVOICE.payment!, iban: 'de89 3704 0044 0532 0130 00' },
    });
    expect(payee.PayeePartyCreditorFinancialAccount.IBANID).toBe('DE89370400440532013000');
    const debited = settlement({
      ...SAMPLE_INVOICE,
      payment: { ...DIRECT_DEBIT_PAYMENT, debited_account: 'DE75 5121 0800 1245 1261 99' },
    });
    expect(debited.PayerPartyDebtorFinancialAccount.IBANID).toBe('DE75512108001245126199');
  });

  it('an account that is not an IBAN (a credit transfer, means 30, may name one) is written as sent', () => {
    const payee = settlement({
      ...SAMPLE_INVOICE,
      payment: { ...SAMPLE_INVOICE.payment!, means_code: '30', iban: '0012 3456 78 x' },
    });
    expect(payee.PayeePartyCreditorFinancialAccount.IBANID).toBe('0012 3456 78 x');
  });
});
