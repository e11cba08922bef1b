/**
 * The EN 16931 arithmetic (BR-CO-10…16, BR-CO-17, BR-S-08 and its siblings), in exact decimals
 * (decimals.ts): line net amount = quantity × net price, rounded half away from zero to 2 decimals;
 * per VAT category and rate, taxable amount = its lines − its allowances + its charges, tax = taxable ×
 * rate / 100 rounded the same way; the document totals are sums of those. Rounding per category (not
 * per line) is what BR-CO-17 and the CEN schematron expect.
 */
import {
  AMOUNT_DECIMALS,
  digitsOf,
  Exact,
  fitting,
  MAX_DIGITS,
  PRICE_DECIMALS,
  QUANTITY_DECIMALS,
  RATE_DECIMALS,
  type Decimal,
} from './decimals.js';
import type { Invoice } from './invoice-schema.js';

/** One VAT breakdown group (BG-23). */
export interface VatBreakdown {
  category: string;
  /** Percent; undefined for category O (BR-O-05). */
  rate: Decimal | undefined;
  taxable: Decimal;
  tax: Decimal;
  exemptionReason?: string;
}

/** Everything the XML and the template show that the service computes; every amount has 2 decimals. */
export interface InvoiceTotals {
  lineNet: Decimal[];
  lineTotal: Decimal;
  allowanceTotal: Decimal;
  chargeTotal: Decimal;
  taxExclusive: Decimal;
  taxTotal: Decimal;
  taxInclusive: Decimal;
  prepaid: Decimal;
  amountDue: Decimal;
  vat: VatBreakdown[];
}

/** Line net amount (BT-131): quantity × net price, to 2 decimals. */
export function lineNetAmount(quantity: Decimal, netPrice: Decimal): Decimal {
  return quantity.times(netPrice).toDecimalPlaces(AMOUNT_DECIMALS);
}

/** A VAT category's tax amount (BT-117): its taxable amount × rate / 100, to 2 decimals (BR-CO-17). */
export function categoryTax(taxable: Decimal, ratePercent: Decimal): Decimal {
  return taxable.times(ratePercent).div(100).toDecimalPlaces(AMOUNT_DECIMALS);
}

const ZERO = new Exact(0);
const sum = (xs: Decimal[]): Decimal => xs.reduce((a, b) => a.plus(b), ZERO);
const amount = (x: Invoice['prepaid_amount']): Decimal => fitting(x, AMOUNT_DECIMALS);
const rateOf = (category: string | undefined, rate: Invoice['lines'][number]['vat_rate']): Decimal | undefined =>
  category === 'O' ? undefined : fitting(rate, RATE_DECIMALS);

/** Computes every derived amount of an invoice; values business-rules.ts refuses count as 0. */
export function computeTotals(invoice: Invoice): InvoiceTotals {
  const lineNet = invoice.lines.map((l) =>
    lineNetAmount(fitting(l.quantity, QUANTITY_DECIMALS), fitting(l.net_price, PRICE_DECIMALS)),
  );
  const groups = new Map<string, VatBreakdown>();
  const add = (category: string | undefined, rateValue: Invoice['lines'][number]['vat_rate'], value: Decimal) => {
    const rate = rateOf(category, rateValue);
    // 19 and "19.00" are one rate: the key is the decimal's own digits.
    const key = `${category ?? ''}|${rate?.toFixed() ?? ''}`;
    const group = groups.get(key) ?? { category: category ?? '', rate, taxable: ZERO, tax: ZERO };
    group.taxable = group.taxable.plus(value);
    groups.set(key, group);
  };
  invoice.lines.forEach((l, i) => add(l.vat_category, l.vat_rate, lineNet[i]!));
  for (const a of invoice.allowances ?? []) add(a.vat_category, a.vat_rate, amount(a.amount).negated());
  for (const c of invoice.charges ?? []) add(c.vat_category, c.vat_rate, amount(c.amount));
  const reasons = new Map((invoice.vat_exemption_reasons ?? []).map((r) => [r.vat_category, r.reason]));
  const vat = [...groups.values()].map((g) => ({
    ...g,
    tax: categoryTax(g.taxable, g.rate ?? ZERO),
    ...(reasons.has(g.category) ? { exemptionReason: reasons.get(g.category) } : {}),
  }));
  const lineTotal = sum(lineNet);
  const allowanceTotal = sum((invoice.allowances ?? []).map((a) => amount(a.amount)));
  const chargeTotal = sum((invoice.charges ?? []).map((c) => amount(c.amount)));
  const taxExclusive = lineTotal.minus(allowanceTotal).plus(chargeTotal);
  const taxTotal = sum(vat.map((g) => g.tax));
  const taxInclusive = taxExclusive.plus(taxTotal);
  const prepaid = amount(invoice.prepaid_amount);
  return {
    lineNet,
    lineTotal,
    allowanceTotal,
    chargeTotal,
    taxExclusive,
    taxTotal,
    taxInclusive,
    prepaid,
    amountDue: taxInclusive.minus(prepaid),
    vat,
  };
}

/** The computed amounts past MAX_DIGITS, each with its business term's name; empty when all fit. */
export function oversizedTotals(t: InvoiceTotals): { term: string; value: Decimal }[] {
  const named: [string, Decimal][] = [
    ['the sum of line net amounts (BT-106)', t.lineTotal],
    ['the sum of allowances (BT-107)', t.allowanceTotal],
    ['the sum of charges (BT-108)', t.chargeTotal],
    ['the total without VAT (BT-109)', t.taxExclusive],
    ...t.vat.flatMap((g): [string, Decimal][] => [
      [`the taxable amount of VAT category ${g.category}${g.rate ? ` ${g.rate.toFixed()} %` : ''} (BT-116)`, g.taxable],
      [`the VAT of category ${g.category}${g.rate ? ` ${g.rate.toFixed()} %` : ''} (BT-117)`, g.tax],
    ]),
    ['the VAT total (BT-110)', t.taxTotal],
    ['the total with VAT (BT-112)', t.taxInclusive],
    ['the amount due (BT-115)', t.amountDue],
  ];
  return named.filter(([, value]) => digitsOf(value) > MAX_DIGITS).map(([term, value]) => ({ term, value }));
}
