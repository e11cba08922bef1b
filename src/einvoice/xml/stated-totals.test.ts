/**
 * BR-CO-10…17 on a customer's own XML: the XML the service builds (from the issue's sample invoice, a
 * credit note with a charge and a prepaid amount, and an invoice not subject to VAT) reads back as the
 * totals it was built with and breaks no rule, in every format and profile, whatever prefixes it
 * uses; each total changed by hand is refused with its rule id, through checkEInvoice.
 */
import { describe, expect, it } from 'vitest';
import { ValidationError, type ValidationIssue } from '../../shared/errors.js';
import { NOT_SUBJECT_INVOICE, SAMPLE_INVOICE } from '../../../test/support/documents/einvoice-samples.js';
import { buildEInvoice, checkEInvoice } from '../einvoice.js';
import { EINVOICE_PROFILES, type EInvoiceFormat, type EInvoiceProfile, type Invoice } from '../invoice-schema.js';
import { readStatedTotals, statedTotalsIssues } from './stated-totals.js';
import { computeTotals } from '../totals.js';
import type { Decimal } from '../decimals.js';

const LOC = ['body', 'einvoice', 'xml'];
/** An amount as the XML writes it (undefined stays undefined). */
const text = (d: Decimal | undefined) => d?.toFixed(2);

/** A credit note with a document charge and a prepaid amount: every total of BR-CO-11…16 differs. */
const CREDIT_NOTE: Invoice = {
  ...SAMPLE_INVOICE,
  number: 'GS-2026-0007',
  type_code: '381',
  charges: [{ amount: 12.5, reason: 'Handling', reason_code: 'ABL', vat_category: 'S', vat_rate: 19 }],
  prepaid_amount: 100,
};

/** The account the checks run for (the xmllint threads are shared fairly between accounts). */
const accountId = 'stated-totals-test';

const builds: { format: EInvoiceFormat; profile?: EInvoiceProfile }[] = [
  ...EINVOICE_PROFILES.map((profile) => ({ format: 'factur-x' as const, profile })),
  { format: 'xrechnung-cii' },
  { format: 'xrechnung-ubl' },
];
const syntaxOf = (format: EInvoiceFormat): 'cii' | 'ubl' => (format === 'xrechnung-ubl' ? 'ubl' : 'cii');

async function xmlOf(invoice: Invoice, format: EInvoiceFormat, profile?: EInvoiceProfile): Promise<string> {
  return (await buildEInvoice({ format, profile, invoice }, { accountId })).xml;
}

async function refusal(format: EInvoiceFormat, xml: string): Promise<ValidationIssue[]> {
  const error = await checkEInvoice({ format, xml }, { accountId }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, 'the XML was accepted').toBeInstanceOf(ValidationError);
  return (error as ValidationError).issues;
}

/** `xml` with the text of the `nth` (from 1) element named `tag` replaced. */
function setText(xml: string, tag: string, value: string, nth = 1): string {
  let seen = 0;
  const out = xml.replace(
    new RegExp(`(<${tag}(?: [^>]*)?>)([^<]*)(</${tag}>)`, 'g'),
    (all, open: string, _text: string, close: string) => (++seen === nth ? `${open}${value}${close}` : all),
  );
  expect(seen, `${tag} in the XML`).toBeGreaterThanOrEqual(nth);
  return out;
}

describe("the totals a customer's XML states (BR-CO-10…17)", () => {
  for (const [name, invoice] of [
    ['the sample invoice', SAMPLE_INVOICE],
    ['a credit note with a charge and a prepaid amount', CREDIT_NOTE],
    ['an invoice not subject to VAT', NOT_SUBJECT_INVOICE],
  ] as const) {
    it.each(builds)(
      `${name} as $format $profile reads back as built and breaks no rule`,
      async ({ format, profile }) => {
        const xml = await xmlOf(invoice, format, profile);
        const stated = await readStatedTotals(xml, syntaxOf(format), accountId);
        const t = computeTotals(invoice);
        expect(statedTotalsIssues(stated, syntaxOf(format), profile ?? 'en16931', LOC)).toEqual([]);
        expect(text(stated.taxInclusive)).toBe(text(t.taxInclusive));
        expect(text(stated.amountDue)).toBe(text(t.amountDue));
        expect(text(stated.taxTotal)).toBe(text(t.taxTotal));
        if (profile === 'minimum') {
          expect(stated.lineCount).toBe(0);
          return;
        }
        expect(text(stated.lineTotal)).toBe(text(t.lineTotal));
        // BASIC WL states BT-106 without lines.
        expect(text(stated.lineSum)).toBe(profile === 'basic-wl' ? '0.00' : text(t.lineTotal));
        expect(text(stated.taxExclusive)).toBe(text(t.taxExclusive));
        expect(stated.groups.map((g) => text(g.tax))).toEqual(t.vat.map((g) => text(g.tax)));
        expect(text(stated.groupTaxSum)).toBe(text(t.taxTotal));
        if (profile !== 'basic-wl') expect(stated.lineCount).toBe(invoice.lines.length);
      },
    );
  }

  it('reads CII whatever prefixes it uses (namespaces, not prefixes)', async () => {
    const xml = (await xmlOf(SAMPLE_INVOICE, 'factur-x', 'en16931'))
      .replaceAll('ram:', 'r:')
      .replaceAll('xmlns:ram=', 'xmlns:r=');
    expect(xml).not.toContain('ram:');
    const stated = await readStatedTotals(xml, 'cii', accountId);
    expect(text(stated.taxInclusive)).toBe('1460.21');
    expect(stated.lineCount).toBe(3);
    const broken = setText(xml, 'r:GrandTotalAmount', '1460.20');
    expect((await refusal('factur-x', broken)).map((i) => i.type)).toEqual(['BR-CO-15', 'BR-CO-16']);
  });

  it.each([
    { rule: 'BR-CO-10', tag: 'ram:LineTotalAmount', value: '1200.01', nth: 1, also: [] },
    { rule: 'BR-CO-13', tag: 'ram:TaxBasisTotalAmount', value: '1234.61', nth: 1, also: ['BR-CO-15'] },
    { rule: 'BR-CO-15', tag: 'ram:GrandTotalAmount', value: '1460.00', nth: 1, also: ['BR-CO-16'] },
    { rule: 'BR-CO-16', tag: 'ram:DuePayableAmount', value: '1460.22', nth: 1, also: [] },
    // The 19 % breakdown's VAT 0.05 off: its own rule, and the sum of the breakdown no longer the total.
    { rule: 'BR-CO-17', tag: 'ram:CalculatedAmount', value: '220.43', nth: 1, also: ['BR-CO-14'] },
  ])('Factur-X EN 16931 with $tag changed: $rule', async ({ rule, tag, value, nth, also }) => {
    const xml = setText(await xmlOf(SAMPLE_INVOICE, 'factur-x', 'en16931'), tag, value, nth);
    const issues = await refusal('factur-x', xml);
    expect(issues.map((i) => i.type).sort()).toEqual([rule, ...also].sort());
    for (const i of issues) {
      expect(i.loc).toEqual(LOC);
      expect(i.msg).toMatch(/^\[BR-CO-1\d\] .+ is -?\d+\.\d\d, but .+ is -?\d+\.\d\d$/);
    }
  });

  it('a VAT total stated a second time in another currency (BT-111) is not taken for BT-110', async () => {
    const cii = (await xmlOf(SAMPLE_INVOICE, 'factur-x', 'en16931')).replace(
      '<ram:TaxTotalAmount currencyID="EUR">225.61</ram:TaxTotalAmount>',
      '<ram:TaxTotalAmount currencyID="USD">244.02</ram:TaxTotalAmount><ram:TaxTotalAmount currencyID="EUR">225.61</ram:TaxTotalAmount>',
    );
    expect(cii).toContain('currencyID="USD"');
    expect(text((await readStatedTotals(cii, 'cii', accountId)).taxTotal)).toBe('225.61');
    const ubl = await xmlOf(SAMPLE_INVOICE, 'xrechnung-ubl');
    const withUsd = ubl.replace(
      '<cac:TaxTotal>',
      '<cac:TaxTotal><cbc:TaxAmount currencyID="USD">244.02</cbc:TaxAmount></cac:TaxTotal><cac:TaxTotal>',
    );
    expect(withUsd).toContain('currencyID="USD"');
    const stated = await readStatedTotals(withUsd, 'ubl', accountId);
    expect(text(stated.taxTotal)).toBe('225.61');
    expect(stated.groupCount).toBe(2);
    expect(statedTotalsIssues(stated, 'ubl', 'en16931', LOC)).toEqual([]);
  });

  it('EXTENDED sub-lines (a line with a parent line) leave BR-CO-10 unchecked; the other totals still are', async () => {
    const xml = (await xmlOf(SAMPLE_INVOICE, 'factur-x', 'extended')).replace(
      /(<ram:AssociatedDocumentLineDocument>\s*<ram:LineID>2<\/ram:LineID>)/,
      '$1<ram:ParentLineID>1</ram:ParentLineID>',
    );
    expect(xml).toContain('<ram:ParentLineID>1</ram:ParentLineID>');
    const stated = await readStatedTotals(setText(xml, 'ram:LineTotalAmount', '1.00'), 'cii', accountId);
    expect(stated.subLineCount).toBe(1);
    expect(statedTotalsIssues(stated, 'cii', 'extended', LOC)).toEqual([]);
    const minimumDue = await readStatedTotals(
      setText(await xmlOf(SAMPLE_INVOICE, 'factur-x', 'minimum'), 'ram:DuePayableAmount', '1.00'),
      'cii',
      accountId,
    );
    expect(statedTotalsIssues(minimumDue, 'cii', 'minimum', LOC)).toEqual([]);
  });

  it('a category VAT one cent off its rounded amount is allowed (a rounding convention), the sum of the breakdown is still checked', async () => {
    const xml = setText(await xmlOf(SAMPLE_INVOICE, 'factur-x', 'en16931'), 'ram:CalculatedAmount', '220.39');
    expect((await refusal('factur-x', xml)).map((i) => i.type)).toEqual(['BR-CO-14']);
  });

  it.each([
    { rule: 'BR-CO-11', tag: 'cbc:AllowanceTotalAmount', value: '40.00', also: ['BR-CO-13'] },
    { rule: 'BR-CO-12', tag: 'cbc:ChargeTotalAmount', value: '12.00', also: ['BR-CO-13'] },
    { rule: 'BR-CO-14', tag: 'cbc:TaxAmount', value: '1.00', also: ['BR-CO-15'] },
    { rule: 'BR-CO-16', tag: 'cbc:PayableAmount', value: '0.00', also: [] },
  ])('XRechnung UBL credit note with $tag changed: $rule', async ({ rule, tag, value, also }) => {
    const xml = setText(await xmlOf(CREDIT_NOTE, 'xrechnung-ubl'), tag, value);
    expect(xml).toContain('<CreditNote');
    expect((await refusal('xrechnung-ubl', xml)).map((i) => i.type).sort()).toEqual([rule, ...also].sort());
  });
});

/**
 * Issue 37: the sums are exact. libxml2's sum() adds binary doubles, in which 12345678901234567.89 +
 * 0.01 is 12345678901234568, so a BT-106 of 12345678901234568.00 passed and the right one could not be
 * told from it; each amount is now read as written and added as a decimal.
 */
describe('exact sums of the amounts an XML states (issue 37)', () => {
  const LINES = ['12345678901234567.89', '0.01', '0.00'];
  /** The sample as Factur-X EN 16931 with those line amounts, and BT-106 (and what follows from it: BT-109, BT-112, BT-115) as `lineTotal`. */
  async function ciiWith(lineTotal: string, basis: string, grand: string): Promise<string> {
    let xml = await xmlOf(SAMPLE_INVOICE, 'factur-x', 'en16931');
    LINES.forEach((amount, i) => {
      xml = setText(xml, 'ram:LineTotalAmount', amount, i + 1);
    });
    xml = setText(xml, 'ram:LineTotalAmount', lineTotal, 4);
    xml = setText(xml, 'ram:TaxBasisTotalAmount', basis);
    xml = setText(xml, 'ram:GrandTotalAmount', grand);
    return setText(xml, 'ram:DuePayableAmount', grand);
  }

  it('CII: the right BT-106 passes, one 0.10 off is BR-CO-10', async () => {
    const right = await ciiWith('12345678901234567.90', '12345678901234517.90', '12345678901234743.51');
    const stated = await readStatedTotals(right, 'cii', accountId);
    expect(text(stated.lineSum)).toBe('12345678901234567.90');
    expect(statedTotalsIssues(stated, 'cii', 'en16931', LOC)).toEqual([]);
    await expect(checkEInvoice({ format: 'factur-x', xml: right }, { accountId })).resolves.toBeDefined();

    const off = await ciiWith('12345678901234568.00', '12345678901234518.00', '12345678901234743.61');
    expect(await refusal('factur-x', off)).toEqual([
      {
        loc: LOC,
        type: 'BR-CO-10',
        msg: "[BR-CO-10] The sum of line net amounts (BT-106, ram:LineTotalAmount) is 12345678901234568.00, but the sum of the 3 lines' net amounts is 12345678901234567.90",
      },
    ]);
  });

  it('UBL: the same, on cbc:LineExtensionAmount', async () => {
    let xml = await xmlOf(SAMPLE_INVOICE, 'xrechnung-ubl');
    // The document's total comes first in UBL (cac:LegalMonetaryTotal precedes the lines).
    LINES.forEach((amount, i) => {
      xml = setText(xml, 'cbc:LineExtensionAmount', amount, i + 2);
    });
    const off = setText(
      setText(
        setText(
          setText(xml, 'cbc:LineExtensionAmount', '12345678901234568.00', 1),
          'cbc:TaxExclusiveAmount',
          '12345678901234518.00',
        ),
        'cbc:TaxInclusiveAmount',
        '12345678901234743.61',
      ),
      'cbc:PayableAmount',
      '12345678901234743.61',
    );
    expect((await refusal('xrechnung-ubl', off)).map((i) => i.type)).toEqual(['BR-CO-10']);
    const right = setText(
      setText(
        setText(
          setText(xml, 'cbc:LineExtensionAmount', '12345678901234567.90', 1),
          'cbc:TaxExclusiveAmount',
          '12345678901234517.90',
        ),
        'cbc:TaxInclusiveAmount',
        '12345678901234743.51',
      ),
      'cbc:PayableAmount',
      '12345678901234743.51',
    );
    await expect(checkEInvoice({ format: 'xrechnung-ubl', xml: right }, { accountId })).resolves.toBeDefined();
  });

  it('comments and CDATA sections inside an amount are read as XPath reads the element (they are no part of its value)', async () => {
    const sample = await xmlOf(SAMPLE_INVOICE, 'factur-x', 'en16931');
    const xml = setText(
      setText(setText(sample, 'ram:LineTotalAmount', '1.00', 4), 'ram:LineTotalAmount', '<![CDATA[74.70]]>', 2),
      'ram:LineTotalAmount',
      '12<!-- x -->00.00',
      1,
    );
    const stated = await readStatedTotals(xml, 'cii', accountId);
    expect(text(stated.lineSum)).toBe('1284.60');
    expect((await refusal('factur-x', xml)).map((i) => i.type)).toEqual(['BR-CO-10', 'BR-CO-13']);
  });

  it('a line amount that is not a number leaves BR-CO-10 unchecked (no sum is made of it); the rest is checked', async () => {
    // UBL is not checked against its XSD here, so a line amount can be text.
    const xml = setText(
      setText(await xmlOf(SAMPLE_INVOICE, 'xrechnung-ubl'), 'cbc:LineExtensionAmount', 'n/a', 2),
      'cbc:LineExtensionAmount',
      '1.00',
      1,
    );
    const stated = await readStatedTotals(xml, 'ubl', accountId);
    expect(stated.lineSum).toBeUndefined();
    expect((await refusal('xrechnung-ubl', xml)).map((i) => i.type)).toEqual(['BR-CO-13']);
  });
});
