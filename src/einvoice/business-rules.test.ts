/**
 * Business rules on the JSON that the CEN and Factur-X schematrons enforce on the XML and that need a
 * field of the model: an intra-community supply (K) needs the delivery date and the deliver-to country
 * (BR-IC-11, BR-IC-12); XRechnung needs the deliver-to city and post code when there is a deliver-to
 * address (BR-DE-10, BR-DE-11). The UBL builder writes the deliver-to location.
 */
import { describe, expect, it } from 'vitest';
import { DIRECT_DEBIT_PAYMENT, SAMPLE_INVOICE } from '../../test/support/documents/einvoice-samples.js';
import { checkBusinessRules } from './business-rules.js';
import type { Invoice } from './invoice-schema.js';
import { computeTotals } from './totals.js';
import { buildUblXml } from './xml/ubl-xml.js';

/** The sample invoice as an intra-community supply to a French buyer. */
const K_INVOICE: Invoice = {
  ...SAMPLE_INVOICE,
  buyer: {
    ...SAMPLE_INVOICE.buyer,
    vat_id: 'FR12345678901',
    address: { ...SAMPLE_INVOICE.buyer.address, country_code: 'FR' },
  },
  lines: SAMPLE_INVOICE.lines.map((l) => ({ ...l, vat_category: 'K', vat_rate: 0 })),
  allowances: SAMPLE_INVOICE.allowances!.map((a) => ({ ...a, vat_category: 'K', vat_rate: 0 })),
  vat_exemption_reasons: [{ vat_category: 'K', reason: 'Intra-community supply' }],
  deliver_to: {
    name: 'Entrepôt Lyon',
    address: { line1: '5 rue du Port', city: 'Lyon', postal_code: '69002', country_code: 'FR' },
  },
};
const rules = (invoice: Invoice, format: 'factur-x' | 'xrechnung-cii' = 'factur-x') =>
  checkBusinessRules(invoice, format).map((i) => [i.type, i.loc.slice(3).join('.')]);

describe('intra-community supply (K): delivery date and deliver-to country', () => {
  it('passes with both', () => {
    expect(rules(K_INVOICE)).toEqual([]);
    expect(rules(K_INVOICE, 'xrechnung-cii')).toEqual([]);
  });

  it('BR-IC-11 without the delivery date, BR-IC-12 without deliver_to', () => {
    const { delivery_date: _d, deliver_to: _t, ...invoice } = K_INVOICE;
    expect(rules(invoice)).toEqual([
      ['BR-IC-11', 'delivery_date'],
      ['BR-IC-12', 'deliver_to'],
    ]);
  });

  it('an unknown deliver-to country is BR-CL-14', () => {
    expect(rules({ ...K_INVOICE, deliver_to: { address: { country_code: 'XX' } } })).toEqual([
      ['BR-CL-14', 'deliver_to.address.country_code'],
    ]);
  });

  it('XRechnung: a deliver-to address needs city and post code (BR-DE-10, BR-DE-11); other formats take the country alone', () => {
    const invoice = { ...K_INVOICE, deliver_to: { address: { country_code: 'FR' } } };
    expect(rules(invoice)).toEqual([]);
    expect(rules(invoice, 'xrechnung-cii')).toEqual([
      ['BR-DE-10', 'deliver_to.address.city'],
      ['BR-DE-11', 'deliver_to.address.postal_code'],
    ]);
  });

  it('UBL: cac:Delivery carries the date, the deliver-to location and party, in the schema order', () => {
    const xml = buildUblXml({ invoice: K_INVOICE, totals: computeTotals(K_INVOICE) });
    const delivery = /<cac:Delivery>([\s\S]*?)<\/cac:Delivery>/.exec(xml)?.[1]?.replace(/\s+/g, '');
    expect(delivery).toBe(
      '<cbc:ActualDeliveryDate>2026-11-18</cbc:ActualDeliveryDate>' +
        '<cac:DeliveryLocation><cac:Address><cbc:StreetName>5rueduPort</cbc:StreetName><cbc:CityName>Lyon</cbc:CityName><cbc:PostalZone>69002</cbc:PostalZone>' +
        '<cac:Country><cbc:IdentificationCode>FR</cbc:IdentificationCode></cac:Country></cac:Address></cac:DeliveryLocation>' +
        '<cac:DeliveryParty><cac:PartyName><cbc:Name>EntrepôtLyon</cbc:Name></cac:PartyName></cac:DeliveryParty>',
    );
  });
});

describe('direct debit: the mandate (BG-19) XRechnung requires', () => {
  const withPayment = (payment: NonNullable<Invoice['payment']>): Invoice => ({ ...SAMPLE_INVOICE, payment });
  const xr = (invoice: Invoice) => [
    rules(invoice, 'xrechnung-cii'),
    checkBusinessRules(invoice, 'xrechnung-ubl').map((i) => [i.type, i.loc.slice(3).join('.')]),
  ];

  it('passes with mandate reference, creditor id and debited account, in every format', () => {
    const invoice = withPayment(DIRECT_DEBIT_PAYMENT);
    expect(rules(invoice)).toEqual([]);
    expect(xr(invoice)).toEqual([[], []]);
  });

  it('XRechnung (CII and UBL): a SEPA direct debit without BG-19 is BR-DE-25-a, and each missing part its own rule', () => {
    const expected = [
      ['BR-DE-25-a', 'payment'],
      ['PEPPOL-EN16931-R061', 'payment.mandate_reference'],
      ['BR-DE-30', 'payment.creditor_id'],
      ['BR-DE-31', 'payment.debited_account'],
    ];
    expect(xr(withPayment({ means_code: '59', terms: 'Debited on the due date.' }))).toEqual([expected, expected]);
  });

  it('XRechnung: each missing part alone (PEPPOL-EN16931-R061, BR-DE-30, BR-DE-31)', () => {
    const { mandate_reference: _m, ...noMandate } = DIRECT_DEBIT_PAYMENT;
    const { creditor_id: _c, ...noCreditor } = DIRECT_DEBIT_PAYMENT;
    const { debited_account: _d, ...noDebited } = DIRECT_DEBIT_PAYMENT;
    expect(rules(withPayment(noMandate), 'xrechnung-cii')).toEqual([
      ['PEPPOL-EN16931-R061', 'payment.mandate_reference'],
    ]);
    expect(rules(withPayment(noCreditor), 'xrechnung-cii')).toEqual([['BR-DE-30', 'payment.creditor_id']]);
    expect(rules(withPayment(noDebited), 'xrechnung-cii')).toEqual([['BR-DE-31', 'payment.debited_account']]);
  });

  it('XRechnung: a SEPA direct debit must not carry the payee account (BR-DE-25-b), field by field', () => {
    const invoice = withPayment({
      ...DIRECT_DEBIT_PAYMENT,
      iban: 'DE02120300000000202051',
      bic: 'BYLADEM1001',
      account_name: 'Druckerei Beispiel GmbH',
    });
    expect(rules(invoice, 'xrechnung-cii')).toEqual([
      ['BR-DE-25-b', 'payment.iban'],
      ['BR-DE-25-b', 'payment.bic'],
      ['BR-DE-25-b', 'payment.account_name'],
    ]);
    expect(rules(invoice)).toEqual([]);
  });

  it('XRechnung: direct debit 49 needs the mandate too (R061, then BR-DE-30/31), but BR-DE-25 is for 59 only', () => {
    expect(
      rules(
        withPayment({ means_code: '49', iban: 'DE02120300000000202051', terms: 'Debited on the due date.' }),
        'xrechnung-cii',
      ),
    ).toEqual([
      ['PEPPOL-EN16931-R061', 'payment.mandate_reference'],
      ['BR-DE-30', 'payment.creditor_id'],
      ['BR-DE-31', 'payment.debited_account'],
    ]);
  });

  it('XRechnung: a mandate part with another means code makes a BG-19, which then needs the creditor id and the debited account', () => {
    expect(rules(withPayment({ ...SAMPLE_INVOICE.payment!, mandate_reference: 'M-1' }), 'xrechnung-cii')).toEqual([
      ['BR-DE-30', 'payment.creditor_id'],
      ['BR-DE-31', 'payment.debited_account'],
    ]);
  });

  it('Factur-X / ZUGFeRD: EN 16931 requires no mandate, so a bare direct debit passes', () => {
    expect(
      rules(withPayment({ means_code: '59', iban: 'DE02120300000000202051', terms: 'Debited on the due date.' })),
    ).toEqual([]);
  });
});

describe('IBAN check digits (BR-DE-19, BR-DE-20), in every format', () => {
  const FORMATS = ['factur-x', 'zugferd', 'xrechnung-cii', 'xrechnung-ubl'] as const;
  const withPayment = (payment: NonNullable<Invoice['payment']>): Invoice => ({ ...SAMPLE_INVOICE, payment });
  const everyFormat = (invoice: Invoice) =>
    FORMATS.map((format) => checkBusinessRules(invoice, format).map((i) => [i.type, i.loc.slice(3).join('.')]));
  // DE89370400440532013000 with one digit mistyped, and with two neighbours swapped: length and format still fit.
  const TYPO = 'DE89370400440532013001';
  const SWAPPED = 'DE89370400440523013000';

  it('the sample IBANs pass', () => {
    expect(everyFormat(withPayment({ ...SAMPLE_INVOICE.payment!, iban: 'DE89370400440532013000' }))).toEqual([
      [],
      [],
      [],
      [],
    ]);
    expect(everyFormat(withPayment(DIRECT_DEBIT_PAYMENT))).toEqual([[], [], [], []]);
  });

  it('SEPA credit transfer (58): a payee IBAN with wrong check digits is BR-DE-19 on payment.iban', () => {
    const issues = checkBusinessRules(withPayment({ ...SAMPLE_INVOICE.payment!, iban: TYPO }), 'factur-x');
    expect(issues).toEqual([
      expect.objectContaining({ type: 'BR-DE-19', loc: ['body', 'einvoice', 'invoice', 'payment', 'iban'] }),
    ]);
    expect(issues[0]!.msg).toMatch(/^\[BR-DE-19\] payment\.iban is not a valid IBAN \(its check digits/);
    expect(everyFormat(withPayment({ ...SAMPLE_INVOICE.payment!, iban: TYPO }))).toEqual(
      FORMATS.map(() => [['BR-DE-19', 'payment.iban']]),
    );
    expect(rules(withPayment({ ...SAMPLE_INVOICE.payment!, iban: SWAPPED }))).toEqual([['BR-DE-19', 'payment.iban']]);
  });

  it('SEPA direct debit (59): a debited account with wrong check digits is BR-DE-20 on payment.debited_account', () => {
    const issues = checkBusinessRules(
      withPayment({ ...DIRECT_DEBIT_PAYMENT, debited_account: 'DE75512108001245126198' }),
      'xrechnung-ubl',
    );
    expect(issues).toEqual([
      expect.objectContaining({ type: 'BR-DE-20', loc: ['body', 'einvoice', 'invoice', 'payment', 'debited_account'] }),
    ]);
    expect(issues[0]!.msg).toMatch(/^\[BR-DE-20\] payment\.debited_account is not a valid IBAN/);
    expect(everyFormat(withPayment({ ...DIRECT_DEBIT_PAYMENT, debited_account: 'DE75512108001245126198' }))).toEqual(
      FORMATS.map(() => [['BR-DE-20', 'payment.debited_account']]),
    );
  });

  it('a wrong length or an unknown country is not an IBAN either', () => {
    expect(rules(withPayment({ ...SAMPLE_INVOICE.payment!, iban: 'DE8937040044053201300' }))).toEqual([
      ['BR-DE-19', 'payment.iban'],
    ]);
    expect(rules(withPayment({ ...SAMPLE_INVOICE.payment!, iban: 'XX89370400440532013000' }))).toEqual([
      ['BR-DE-19', 'payment.iban'],
    ]);
    expect(rules(withPayment({ ...DIRECT_DEBIT_PAYMENT, debited_account: 'not an iban' }))).toEqual([
      ['BR-DE-20', 'payment.debited_account'],
    ]);
  });

  it('spaces and lower case are accepted: the check reads the IBAN without whitespace, in capitals', () => {
    expect(everyFormat(withPayment({ ...SAMPLE_INVOICE.payment!, iban: 'DE89 3704 0044 0532 0130 00' }))).toEqual([
      [],
      [],
      [],
      [],
    ]);
    expect(rules(withPayment({ ...SAMPLE_INVOICE.payment!, iban: 'de89 3704 0044 0532 0130 00' }))).toEqual([]);
    expect(
      everyFormat(withPayment({ ...DIRECT_DEBIT_PAYMENT, debited_account: 'DE75 5121 0800 1245 1261 99' })),
    ).toEqual([[], [], [], []]);
    // Spaces do not hide a wrong check digit.
    expect(rules(withPayment({ ...SAMPLE_INVOICE.payment!, iban: 'DE89 3704 0044 0532 0130 01' }))).toEqual([
      ['BR-DE-19', 'payment.iban'],
    ]);
  });

  it('credit transfer (30) may name a non-IBAN account: not checked', () => {
    expect(everyFormat(withPayment({ ...SAMPLE_INVOICE.payment!, means_code: '30', iban: '0532013000' }))).toEqual([
      [],
      [],
      [],
      [],
    ]);
  });

  it('each rule only for its means code: a debited account with 58, a payee IBAN with 49 are not checked', () => {
    expect(rules(withPayment({ ...SAMPLE_INVOICE.payment!, debited_account: TYPO }))).toEqual([]);
    expect(rules(withPayment({ means_code: '49', iban: TYPO, terms: 'Debited on the due date.' }))).toEqual([]);
  });
});
