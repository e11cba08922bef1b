/**
 * Exact decimals for e-invoices: every amount, quantity, unit price and percentage is a decimal.js
 * `Decimal` from the moment it is read (a JSON number, a decimal string, the text of an XML element)
 * until it is written (`toFixed`), so no value of an invoice passes through binary floating point in
 * the service, and the XML states the value that was sent, digit for digit.
 *
 * The limits (docs/einvoice.md, "Numbers"): EN 16931-1 fixes the decimals of an Amount (2, the CEN
 * schematron's BR-DEC-* rules) and leaves unit prices, quantities and percentages open; it sets no
 * limit on the number of digits, nor do the CII and UBL schemas (xs:decimal). The service allows at
 * most 15 significant digits in every value it takes and every amount it computes: the most a binary
 * double holds exactly (IEEE 754 binary64 keeps any decimal of up to 15 significant digits through a
 * round trip), and a double is how many receivers read an amount: JavaScript and JSON consumers,
 * spreadsheets, and the CEN schematron itself, whose CII rules BR-CO-10, -11, -12 and -14 add the
 * parts with XPath 2.0 sum() over untyped values, which is xs:double arithmetic. It is below what
 * XML Schema requires every processor to support for xs:decimal (16 digits in XSD 1.1, 18 in 1.0).
 * 15 digits is also what a JSON number can carry unchanged: JSON.parse gives a double, and the
 * shortest decimal that double prints as is the one that was sent whenever that had 15 significant
 * digits or fewer, so a number within the limit is read exactly and one past it is refused.
 */
import { Decimal } from 'decimal.js';

/**
 * decimal.js for the e-invoice arithmetic: 100 significant digits, more than any result here has
 * (the model's values have at most 15 digits and a customer's XML amounts at most
 * XML_AMOUNT_MAX_DIGITS, so a product of two plus a sum of millions stays far below), so nothing is
 * rounded except where the rules round, with toDecimalPlaces: half away from zero (docs/einvoice.md).
 */
export const Exact = Decimal.clone({ precision: 100, rounding: Decimal.ROUND_HALF_UP });

export { Decimal };

/**
 * The most significant digits of an amount read from a customer's own XML (stated-totals.ts): far past
 * any invoice, and a bound on the work and the size of the sums; a longer one is not read as a number.
 */
export const XML_AMOUNT_MAX_DIGITS = 40;

/** A number of the JSON model: a JSON number or a decimal string such as "1234.56". */
export type DecimalInput = number | string;

/** The most significant digits a value of the JSON model, or an amount computed from them, may have (see above). */
export const MAX_DIGITS = 15;

/** Decimals: amounts 2 (EN 16931, BR-DEC-*); unit prices and quantities 4, percentages 2 (the service's limits). */
export const AMOUNT_DECIMALS = 2;
export const PRICE_DECIMALS = 4;
export const QUANTITY_DECIMALS = 4;
export const RATE_DECIMALS = 2;

/** A decimal string of the JSON model: xs:decimal's lexical form (no exponent), e.g. "-12.50", "0.0750". */
export const DECIMAL_STRING_PATTERN = '^[+-]?([0-9]+([.][0-9]*)?|[.][0-9]+)$';
const DECIMAL_STRING = new RegExp(DECIMAL_STRING_PATTERN);
/** Room for 15 significant digits with a sign, a point and leading or trailing zeros; bounds the parse. */
export const DECIMAL_STRING_MAX_LENGTH = 40;

/** A JSON number or decimal string as a Decimal (-0 as 0); undefined for NaN, ±Infinity and text that is not a decimal. */
export function toDecimal(value: DecimalInput): Decimal | undefined {
  if (typeof value === 'number' && !Number.isFinite(value)) return undefined;
  if (typeof value === 'string' && (value.length > DECIMAL_STRING_MAX_LENGTH || !DECIMAL_STRING.test(value)))
    return undefined;
  // A number becomes the shortest decimal that reads back as the same double (decimal.js uses its String()).
  const d = new Exact(value);
  return d.isZero() ? new Exact(0) : d;
}

/** Significant digits as XML Schema's totalDigits counts them: 1e20 has 21, 0.0050 has 1, 0 has 1. */
export function digitsOf(d: Decimal): number {
  return d.isZero() ? 1 : d.sd(true);
}

/** Why a value of the model cannot be taken, as a 422's `type` names it and a message; null when it fits. */
export type DecimalProblem = { kind: 'syntax' | 'digits' | 'decimals'; msg: string };

/**
 * The first thing wrong with a value that may have at most `decimals` decimals: not a decimal, more
 * than MAX_DIGITS significant digits, or more decimals. Digits come first: a JSON number past them
 * may already differ from what was sent, so its decimals say nothing.
 */
export function decimalProblem(value: DecimalInput, decimals: number): DecimalProblem | null {
  const d = toDecimal(value);
  if (d === undefined)
    return {
      kind: 'syntax',
      msg: `${JSON.stringify(value)} is not a decimal number; send a JSON number or a decimal string such as "1234.56"`,
    };
  const digits = digitsOf(d);
  if (digits > MAX_DIGITS) {
    const read =
      typeof value === 'number'
        ? ` (as a JSON number it reads ${d.toString()}: JSON numbers are binary doubles, exact only to ${MAX_DIGITS} digits)`
        : '';
    return { kind: 'digits', msg: `${digits} significant digits${read}; at most ${MAX_DIGITS}` };
  }
  if (d.decimalPlaces() > decimals)
    return { kind: 'decimals', msg: `At most ${decimals} decimals; ${d.toFixed()} has ${d.decimalPlaces()}` };
  return null;
}

/** The value as a Decimal when it fits (`decimalProblem` is null), else 0: what the totals use for a refused field. */
export function fitting(value: DecimalInput | undefined, decimals: number): Decimal {
  if (value === undefined || decimalProblem(value, decimals) !== null) return new Exact(0);
  return toDecimal(value)!;
}

/** An amount with exactly 2 decimals, e.g. "-12.30" (never an exponent). */
export function formatAmount(d: Decimal): string {
  return d.toFixed(AMOUNT_DECIMALS);
}

/** A plain decimal (no exponent, no trailing zeros), e.g. "0.075", "19", "123456789012345". */
export function formatDecimal(d: Decimal): string {
  return d.toFixed();
}

/** A number of the model as the XML states it: the exact decimal sent, plainly written (business-rules.ts passed it). */
export function xmlNumber(value: DecimalInput, decimals: number): string {
  return formatDecimal(fitting(value, decimals));
}
