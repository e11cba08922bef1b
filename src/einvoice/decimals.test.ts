/**
 * Exact amounts (issue 37, case 6): the invoice's numbers go into the XML as the decimals that were
 * sent and every computed amount is exact, through checkEInvoice (the rules, then the XML against its
 * schema, as before a charge); a value or a computed amount past 15 significant digits, or with more
 * decimals than its field allows, is refused with its rule rather than rounded. Before, quantity
 * 123456789012345 at net price 1 gave the line net amount 123456789012345.01 (scaling multiplied
 * binary doubles), quantity 1e20 gave 99999999999999998322.28, and extra decimals within a relative
 * 1e-9 were dropped without a word.
 */
import { describe, expect, it } from 'vitest';
import { SAMPLE_INVOICE } from '../../test/support/documents/einvoice-samples.js';
import { ValidationError, type ValidationIssue } from '../shared/errors.js';
import { checkEInvoice } from './einvoice.js';
import type { EInvoiceFormat, Invoice } from './invoice-schema.js';

/** The sample invoice with one line and no allowance; `line` and `rest` override fields. */
function oneLine(line: Partial<Invoice['lines'][number]>, rest: Partial<Invoice> = {}): Invoice {
  return { ...SAMPLE_INVOICE, lines: [{ ...SAMPLE_INVOICE.lines[0]!, ...line }], allowances: [], ...rest };
}

/** The texts of every element named `tag` in the XML. */
const texts = (xml: string, tag: string) =>
  [...xml.matchAll(new RegExp(`<${tag}(?: [^>]*)?>([^<]*)</${tag}>`, 'g'))].map((m) => m[1]);

async function built(invoice: Invoice, format: EInvoiceFormat = 'xrechnung-cii'): Promise<string> {
  return (await checkEInvoice({ format, invoice }, { accountId: 'decimals-test' })).xml;
}

/** The findings of a refused invoice as [type, loc inside einvoice.invoice, msg]. */
async function refusal(
  invoice: Invoice,
  format: EInvoiceFormat = 'xrechnung-cii',
): Promise<[string, string, string][]> {
  const error = await checkEInvoice({ format, invoice }, { accountId: 'decimals-test' }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error, 'the invoice was accepted').toBeInstanceOf(ValidationError);
  return (error as ValidationError).issues.map((i: ValidationIssue) => [i.type, i.loc.slice(3).join('.'), i.msg]);
}
const types = async (invoice: Invoice) => (await refusal(invoice)).map(([type, loc]) => [type, loc]);

describe("the issue's quantities", () => {
  it('123456789012345 × 1 at 0 % VAT: the line net amount and every total are 123456789012345.00, CII and UBL', async () => {
    const invoice = oneLine({ quantity: 123456789012345, net_price: 1, vat_category: 'Z', vat_rate: 0 });
    const cii = await built(invoice);
    expect(texts(cii, 'ram:BilledQuantity')).toEqual(['123456789012345']);
    expect(texts(cii, 'ram:LineTotalAmount')).toEqual(['123456789012345.00', '123456789012345.00']);
    expect(texts(cii, 'ram:GrandTotalAmount')).toEqual(['123456789012345.00']);
    expect(texts(cii, 'ram:DuePayableAmount')).toEqual(['123456789012345.00']);
    const ubl = await built(invoice, 'xrechnung-ubl');
    expect(texts(ubl, 'cbc:LineExtensionAmount')).toEqual(['123456789012345.00', '123456789012345.00']);
    expect(texts(ubl, 'cbc:PayableAmount')).toEqual(['123456789012345.00']);
  });

  it('123456789012345 × 1 at 19 %: the VAT and the totals would pass 15 digits, so the invoice is refused (BR-DEC-DIGITS on the invoice)', async () => {
    const found = await refusal(oneLine({ quantity: 123456789012345, net_price: 1 }));
    expect(found.map(([type, loc]) => [type, loc])).toEqual([['BR-DEC-DIGITS', '']]);
    expect(found[0]![2]).toContain('the total with VAT (BT-112) 146913578924690.55');
    expect(found[0]![2]).toContain('the VAT total (BT-110) 23456789912345.55');
  });

  it('the totals are checked whatever else the invoice breaks, once its numbers fit', async () => {
    const { buyer_reference: _, ...invoice } = oneLine({ quantity: 123456789012345, net_price: 1 });
    expect(await types(invoice)).toEqual([
      ['BR-DEC-DIGITS', ''],
      ['BR-DE-15', 'buyer_reference'],
    ]);
  });

  it('1e20 is refused on the quantity: 21 significant digits', async () => {
    const found = await refusal(oneLine({ quantity: 1e20, net_price: 1 }));
    expect(found).toEqual([['BR-DEC-DIGITS', 'lines.0.quantity', expect.stringContaining('21 significant digits')]]);
  });

  it('a line net amount past 15 digits is refused on the quantity (quantity × net price made it)', async () => {
    const found = await refusal(oneLine({ quantity: 123456789012345, net_price: 1.5 }));
    expect(found).toEqual([['BR-DEC-DIGITS', 'lines.0.quantity', expect.stringContaining('185185183518517.50')]]);
  });
});

describe('15 significant digits, exactly', () => {
  it('the largest amount with cents that fits: 9999999999999.99 with VAT, exact to the cent', async () => {
    const xml = await built(oneLine({ quantity: 1, net_price: 8403361344537.81 }));
    expect(texts(xml, 'ram:ChargeAmount')).toEqual(['8403361344537.81']);
    expect(texts(xml, 'ram:CalculatedAmount')).toEqual(['1596638655462.18']);
    expect(texts(xml, 'ram:GrandTotalAmount')).toEqual(['9999999999999.99']);
  });

  it('a JSON number past 15 digits may not be the number that was sent: refused, saying what it read', async () => {
    // 0.1 + 0.2 computed in a client and sent as a JSON number.
    const found = await refusal(oneLine({ net_price: 0.1 + 0.2 }));
    expect(found).toEqual([
      ['BR-DEC-DIGITS', 'lines.0.net_price', expect.stringContaining('it reads 0.30000000000000004')],
    ]);
  });

  it('rounding is half away from zero, on exact products', async () => {
    const xml = await built(
      oneLine(
        { quantity: 3, net_price: 0.005 },
        {
          lines: [
            { ...SAMPLE_INVOICE.lines[0]!, id: '1', quantity: 3, net_price: 0.005 },
            { ...SAMPLE_INVOICE.lines[0]!, id: '2', quantity: -3, net_price: 0.005 },
            { ...SAMPLE_INVOICE.lines[0]!, id: '3', quantity: 1.0005, net_price: 1000 },
          ],
        },
      ),
    );
    expect(texts(xml, 'ram:LineTotalAmount')).toEqual(['0.02', '-0.02', '1000.50', '1000.50']);
  });
});

describe('decimals are refused, never rounded away', () => {
  it.each([
    {
      name: 'a quantity with 7 decimals',
      invoice: () => oneLine({ quantity: 1000000.0000001 }),
      found: ['BR-DEC-QUANTITY', 'lines.0.quantity'],
    },
    {
      name: 'a VAT rate with 10 decimals',
      invoice: () => oneLine({ vat_rate: 19.0000000001 }),
      found: ['BR-DEC-RATE', 'lines.0.vat_rate'],
    },
    {
      name: 'an allowance amount with 3 decimals',
      invoice: () => ({ ...SAMPLE_INVOICE, allowances: [{ ...SAMPLE_INVOICE.allowances![0]!, amount: 10000000.001 }] }),
      found: ['BR-DEC-01', 'allowances.0.amount'],
    },
    {
      name: "a charge amount with 3 decimals (BR-DEC-05, the charge's rule)",
      invoice: () => ({
        ...SAMPLE_INVOICE,
        charges: [{ amount: '12.505', reason: 'Handling', vat_category: 'S', vat_rate: 19 }],
      }),
      found: ['BR-DEC-05', 'charges.0.amount'],
    },
    {
      name: 'a prepaid amount with 3 decimals',
      invoice: () => ({ ...SAMPLE_INVOICE, prepaid_amount: '0.001' }),
      found: ['BR-DEC-16', 'prepaid_amount'],
    },
    {
      name: 'a sent total with 3 decimals',
      invoice: () => ({ ...SAMPLE_INVOICE, totals: { tax_inclusive: '1460.210' } }),
      found: [],
    },
    {
      name: 'a sent total past 15 digits',
      invoice: () => ({ ...SAMPLE_INVOICE, totals: { amount_due: '1460210000000000.00' } }),
      found: ['BR-DEC-DIGITS', 'totals.amount_due'],
    },
  ])('$name', async ({ invoice, found }) => {
    if (found.length === 0) {
      // Trailing zeros are not decimals of the value: 1460.210 is 1460.21, the right total.
      await expect(
        checkEInvoice({ format: 'xrechnung-cii', invoice: invoice() }, { accountId: 'decimals-test' }),
      ).resolves.toBeDefined();
      return;
    }
    expect(await types(invoice())).toEqual([found]);
  });
});

describe('decimal strings', () => {
  it('are taken exactly and written as sent (without trailing zeros), CII and UBL', async () => {
    const invoice: Invoice = {
      ...SAMPLE_INVOICE,
      lines: [{ ...SAMPLE_INVOICE.lines[0]!, quantity: '2.5000', net_price: '19.99', vat_rate: '19.00' }],
      allowances: [{ ...SAMPLE_INVOICE.allowances![0]!, amount: '10', vat_rate: '19' }],
      prepaid_amount: '5.5',
      // 49.975 → 49.98; − 10 = 39.98; VAT 7.5962 → 7.60; 47.58 − 5.50.
      totals: { line_total: '49.98', tax_inclusive: '47.58', amount_due: '42.08' },
    };
    const cii = await built(invoice);
    expect(texts(cii, 'ram:BilledQuantity')).toEqual(['2.5']);
    expect(texts(cii, 'ram:ChargeAmount')).toEqual(['19.99']);
    expect(texts(cii, 'ram:RateApplicablePercent')).toEqual(['19', '19', '19']);
    expect(texts(cii, 'ram:ActualAmount')).toEqual(['10.00']);
    expect(texts(cii, 'ram:DuePayableAmount')).toEqual(['42.08']);
    const ubl = await built(invoice, 'xrechnung-ubl');
    expect(texts(ubl, 'cbc:InvoicedQuantity')).toEqual(['2.5']);
    expect(texts(ubl, 'cbc:PriceAmount')).toEqual(['19.99']);
    expect(texts(ubl, 'cbc:PayableAmount')).toEqual(['42.08']);
  });

  it('19 and "19.00" are one VAT rate: one breakdown group', async () => {
    const xml = await built({
      ...SAMPLE_INVOICE,
      lines: [SAMPLE_INVOICE.lines[0]!, { ...SAMPLE_INVOICE.lines[2]!, vat_rate: '19.00' }],
    });
    expect(texts(xml, 'ram:BasisAmount')).toEqual(['1159.90']);
  });

  it("text that is not a decimal, and a rate out of 0…100 as a string, get the schema's words (the schema bounds JSON numbers)", async () => {
    expect(await types(oneLine({ quantity: '1e3' }))).toEqual([['decimal_parsing', 'lines.0.quantity']]);
    expect(await types(oneLine({ vat_rate: '101' }))).toEqual([['less_than_equal', 'lines.0.vat_rate']]);
    expect(await types(oneLine({ net_price: '-1.00' }))).toEqual([['BR-27', 'lines.0.net_price']]);
  });
});
