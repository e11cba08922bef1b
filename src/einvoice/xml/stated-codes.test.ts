/**
 * BR-CL-* on a customer's own XML: the XML the service builds (the issue's sample invoice, a credit
 * note with coded allowance and charge reasons) states only listed codes in every format and profile;
 * each code changed by hand to one outside its list is refused with its rule id through
 * checkEInvoice, and the message names the code and how many there are.
 */
import { describe, expect, it } from 'vitest';
import { ValidationError, type ValidationIssue } from '../../shared/errors.js';
import { SAMPLE_INVOICE } from '../../../test/support/documents/einvoice-samples.js';
import { buildEInvoice, checkEInvoice } from '../einvoice.js';
import { EINVOICE_PROFILES, type EInvoiceFormat, type EInvoiceProfile, type Invoice } from '../invoice-schema.js';
import { readCodeFindings } from './stated-codes.js';

/** A credit note with coded allowance and charge reasons, so that BR-CL-19/20 have something to read. */
const CREDIT_NOTE: Invoice = {
  ...SAMPLE_INVOICE,
  number: 'GS-2026-0008',
  type_code: '381',
  charges: [{ amount: 12.5, reason: 'Handling', reason_code: 'ABL', vat_category: 'S', vat_rate: 19 }],
};

/** The account the checks run for (the xmllint threads are shared fairly between accounts). */
const accountId = 'stated-codes-test';

const builds: { format: EInvoiceFormat; profile?: EInvoiceProfile }[] = [
  ...EINVOICE_PROFILES.map((profile) => ({ format: 'factur-x' as const, profile })),
  { format: 'xrechnung-cii' },
  { format: 'xrechnung-ubl' },
];
const syntaxOf = (format: EInvoiceFormat): 'cii' | 'ubl' => (format === 'xrechnung-ubl' ? 'ubl' : 'cii');
const xmlOf = async (invoice: Invoice, format: EInvoiceFormat, profile?: EInvoiceProfile) =>
  (await buildEInvoice({ format, profile, invoice }, { accountId })).xml;

async function refusal(format: EInvoiceFormat, xml: string): Promise<ValidationIssue[]> {
  const error = await checkEInvoice({ format, xml }, { accountId }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, 'the XML was accepted').toBeInstanceOf(ValidationError);
  return (error as ValidationError).issues;
}

/** `xml` with every match of `pattern` replaced, at least one. */
function replaced(xml: string, pattern: RegExp, by: string): string {
  expect(xml).toMatch(pattern);
  return xml.replace(pattern, by);
}

describe("the codes a customer's XML states (BR-CL-*)", () => {
  for (const [name, invoice] of [
    ['the sample invoice', SAMPLE_INVOICE],
    ['a credit note with a coded charge', CREDIT_NOTE],
  ] as const) {
    it.each(builds)(`${name} as $format $profile states only listed codes`, async ({ format, profile }) => {
      expect(await readCodeFindings(await xmlOf(invoice, format, profile), syntaxOf(format), accountId)).toEqual([]);
    });
  }

  // [rule, what is changed, CII pattern → replacement, UBL pattern → replacement]
  const changes: [string, string, [RegExp, string], [RegExp, string]][] = [
    [
      'BR-CL-04',
      'the invoice currency',
      [/<ram:InvoiceCurrencyCode>EUR</g, '<ram:InvoiceCurrencyCode>EUX<'],
      [/<cbc:DocumentCurrencyCode>EUR</g, '<cbc:DocumentCurrencyCode>EUX<'],
    ],
    [
      'BR-CL-03',
      'the currency of an amount',
      [/<ram:TaxTotalAmount currencyID="EUR"/g, '<ram:TaxTotalAmount currencyID="XXY"'],
      [/<cbc:PayableAmount currencyID="EUR"/g, '<cbc:PayableAmount currencyID="XXY"'],
    ],
    [
      'BR-CL-14',
      "the seller's country",
      [/<ram:CountryID>DE</, '<ram:CountryID>XK1<'],
      [/<cbc:IdentificationCode>DE</, '<cbc:IdentificationCode>XK1<'],
    ],
    [
      'BR-CL-23',
      'every unit code',
      [/unitCode="[A-Z0-9]+"/g, 'unitCode="PIECE"'],
      [/unitCode="[A-Z0-9]+"/g, 'unitCode="PIECE"'],
    ],
    [
      'BR-CL-18',
      "a line's VAT category",
      [
        /(<ram:SpecifiedLineTradeSettlement>\s*<ram:ApplicableTradeTax>\s*<ram:TypeCode>VAT<\/ram:TypeCode>\s*<ram:CategoryCode>)S</,
        '$1X<',
      ],
      [/(<cac:ClassifiedTaxCategory>\s*<cbc:ID>)S</, '$1X<'],
    ],
    [
      'BR-CL-16',
      'the payment means',
      [/(<ram:SpecifiedTradeSettlementPaymentMeans>\s*<ram:TypeCode>)58</, '$1999<'],
      [/<cbc:PaymentMeansCode>58</, '<cbc:PaymentMeansCode>999<'],
    ],
  ];
  for (const format of ['factur-x', 'xrechnung-ubl'] as const) {
    it.each(changes)(`${format}: %s when %s is outside its list`, async (rule, _what, cii, ubl) => {
      const [pattern, by] = format === 'xrechnung-ubl' ? ubl : cii;
      const xml = replaced(
        await xmlOf(SAMPLE_INVOICE, format, format === 'factur-x' ? 'en16931' : undefined),
        pattern,
        by,
      );
      const issues = await refusal(format, xml);
      const mine = issues.filter((i) => i.type === rule);
      expect(mine, JSON.stringify(issues)).toHaveLength(1);
      expect(mine[0]!.loc).toEqual(['body', 'einvoice', 'xml']);
      expect(mine[0]!.msg).toMatch(new RegExp(`^\\[${rule}\\] `));
      expect(mine[0]!.msg).toContain(by.replace(/^.*?(?:>|="|\$1)/, '').replace(/[<"]$/, ''));
    });
  }

  it('counts every code outside its list and names the first; a code with a space is never listed', async () => {
    const xml = replaced(await xmlOf(SAMPLE_INVOICE, 'xrechnung-cii'), /unitCode="[A-Z0-9]+"/g, 'unitCode="C 62"');
    const issues = await refusal('xrechnung-cii', xml);
    const units = issues.find((i) => i.type === 'BR-CL-23');
    expect(units?.msg).toBe(
      `[BR-CL-23] Unit codes (BT-130, BT-150) at ram:BilledQuantity/@unitCode: ${SAMPLE_INVOICE.lines.length} are, the first "C 62", not in UN/ECE Recommendations 20 and 21`,
    );
    // Codes and totals are reported together: a wrong total next to a wrong code gives both.
    const both = await refusal(
      'xrechnung-cii',
      xml.replace(/<ram:DuePayableAmount>([0-9.]+)</, '<ram:DuePayableAmount>1.00<'),
    );
    expect(both.map((i) => i.type).sort()).toEqual(['BR-CL-23', 'BR-CO-16']);
  });
});
