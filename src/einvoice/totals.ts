/**
 * The EN 16931 arithmetic (BR-CO-10…16, BR-CO-17, BR-S-08 and its siblings), in whole cents so no
 * binary fraction ever reaches a total: line net amount = quantity × net price, rounded half away from
 * zero to 2 decimals; per VAT category and rate, taxable amount = its lines − its allowances + its
 * charges, tax = taxable × rate / 100 rounded the same way; the document totals are sums of those.
 * Rounding per category (not per line) is what BR-CO-17 and the CEN schematron expect.
 */
import type { Invoice } from './invoice-schema.js';

/** An amount in cents (integer). */
export type Cents = bigint;

/** One VAT breakdown group (BG-23). */
export interface VatBreakdown {
  category: string;
  /** Percent; undefined for category O (BR-O-05). */
  rate: number | undefined;
  taxable: Cents;
  tax: Cents;
  exemptionReason?: string;
}

/** Everything the XML and the template show that the service computes. */
export interface InvoiceTotals {
  lineNet: Cents[];
  lineTotal: Cents;
  allowanceTotal: Cents;
  chargeTotal: Cents;
  taxExclusive: Cents;
  taxTotal: Cents;
  taxInclusive: Cents;
  prepaid: Cents;
  amountDue: Cents;
  vat: VatBreakdown[];
}

/** `x` as an integer scaled by 10^decimals, or undefined when it has more decimals than that. */
export function toScaled(x: number, decimals: number): bigint | undefined {
  if (!Number.isFinite(x)) return undefined;
  const scaled = Math.round(x * 10 ** decimals);
  if (Math.abs(scaled / 10 ** decimals - x) > 1e-9 * Math.max(1, Math.abs(x))) return undefined;
  return BigInt(scaled);
}

/** a / b rounded half away from zero (b > 0). */
function divRound(a: bigint, b: bigint): bigint {
  const negative = a < 0n;
  const abs = negative ? -a : a;
  const q = (abs * 2n + b) / (2n * b);
  return negative ? -q : q;
}

/** Quantities and prices carry up to this many decimals (more is refused by business-rules.ts). */
export const QUANTITY_DECIMALS = 4;
export const PRICE_DECIMALS = 4;

/** Line net amount (BT-131) in cents. */
export function lineNetCents(quantity: number, netPrice: number): Cents {
  const q = toScaled(quantity, QUANTITY_DECIMALS) ?? 0n;
  const p = toScaled(netPrice, PRICE_DECIMALS) ?? 0n;
  return divRound(q * p, 10n ** BigInt(QUANTITY_DECIMALS + PRICE_DECIMALS - 2));
}

/** A VAT category's tax amount (BT-117): its taxable amount × rate / 100, rounded half away from zero to cents (BR-CO-17). */
export function categoryTaxCents(taxable: Cents, ratePercent: number): Cents {
  return divRound(taxable * (toScaled(ratePercent, 2) ?? 0n), 10_000n);
}

const cents = (x: number | undefined): Cents => (x === undefined ? 0n : toScaled(x, 2) ?? 0n);
const groupKey = (category: string | undefined, rate: number | undefined) => `${category ?? ''}|${category === 'O' ? '' : rate ?? 0}`;

/** Computes every derived amount of an invoice; fields business-rules.ts refuses count as 0. */
export function computeTotals(invoice: Invoice): InvoiceTotals {
  const lineNet = invoice.lines.map((l) => lineNetCents(l.quantity, l.net_price));
  const groups = new Map<string, VatBreakdown>();
  const add = (category: string | undefined, rate: number | undefined, amount: Cents) => {
    const key = groupKey(category, rate);
    const group = groups.get(key) ?? { category: category ?? '', rate: category === 'O' ? undefined : rate ?? 0, taxable: 0n, tax: 0n };
    group.taxable += amount;
    groups.set(key, group);
  };
  invoice.lines.forEach((l, i) => add(l.vat_category, l.vat_rate, lineNet[i]!));
  for (const a of invoice.allowances ?? []) add(a.vat_category, a.vat_rate, -cents(a.amount));
  for (const c of invoice.charges ?? []) add(c.vat_category, c.vat_rate, cents(c.amount));
  const reasons = new Map((invoice.vat_exemption_reasons ?? []).map((r) => [r.vat_category, r.reason]));
  const vat = [...groups.values()].map((g) => ({
    ...g,
    tax: categoryTaxCents(g.taxable, g.rate ?? 0),
    ...(reasons.has(g.category) ? { exemptionReason: reasons.get(g.category) } : {}),
  }));
  const sum = (xs: Cents[]) => xs.reduce((a, b) => a + b, 0n);
  const lineTotal = sum(lineNet);
  const allowanceTotal = sum((invoice.allowances ?? []).map((a) => cents(a.amount)));
  const chargeTotal = sum((invoice.charges ?? []).map((c) => cents(c.amount)));
  const taxExclusive = lineTotal - allowanceTotal + chargeTotal;
  const taxTotal = sum(vat.map((g) => g.tax));
  const taxInclusive = taxExclusive + taxTotal;
  const prepaid = cents(invoice.prepaid_amount);
  return { lineNet, lineTotal, allowanceTotal, chargeTotal, taxExclusive, taxTotal, taxInclusive, prepaid, amountDue: taxInclusive - prepaid, vat };
}

/** Cents as a decimal string with 2 decimals, e.g. -1234n → "-12.34". */
export function formatCents(value: Cents): string {
  const negative = value < 0n;
  const abs = negative ? -value : value;
  const whole = abs / 100n;
  const frac = (abs % 100n).toString().padStart(2, '0');
  return `${negative ? '-' : ''}${whole}.${frac}`;
}

/** A plain decimal for XML (no exponent), with at most `decimals` places and no trailing zeros. */
export function formatDecimal(x: number, decimals: number): string {
  return x.toFixed(decimals).replace(/\.?0+$/, '') || '0';
}
