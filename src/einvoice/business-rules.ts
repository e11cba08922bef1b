/**
 * EN 16931 business rules (and XRechnung's BR-DE rules) checked on the JSON before any XML is built or
 * anything charged. Each finding carries the rule id the standard gives it as its `type` and the `loc`
 * of the field in the request body, so a caller can fix the field the rule names. Checking the JSON
 * (rather than the XML) is what lets a finding point at a field; the XML is then checked against the
 * syntax's schema (xml-schema-check.ts). The rule ids and their texts are the ones of the CEN
 * schematron (EN16931 validation artefacts 1.3.x) and XRechnung 3.0; docs/einvoice-checks.md lists them.
 */
import type { ValidationIssue } from '../shared/errors.js';
import { isIban } from './iban.js';
import {
  ALLOWANCE_REASONS,
  CHARGE_REASONS,
  COUNTRIES,
  CURRENCIES,
  ELECTRONIC_ADDRESS_SCHEMES,
  PAYMENT_MEANS,
  UNITS,
  VAT_CATEGORIES,
} from './code-lists.js';
import {
  AMOUNT_DECIMALS,
  decimalProblem,
  digitsOf,
  formatAmount,
  MAX_DIGITS,
  PRICE_DECIMALS,
  QUANTITY_DECIMALS,
  RATE_DECIMALS,
  toDecimal,
  type Decimal,
  type DecimalInput,
} from './decimals.js';
import {
  INVOICE_TYPE_CODES,
  type EInvoiceFormat,
  type Invoice,
  type InvoiceAllowanceCharge,
  type InvoiceParty,
} from './invoice-schema.js';
import { computeTotals, oversizedTotals } from './totals.js';

type Loc = (string | number)[];
const BASE: Loc = ['body', 'einvoice', 'invoice'];

/** Collects findings; `rule` becomes the issue's `type`. */
class Findings {
  readonly issues: ValidationIssue[] = [];
  add(rule: string, loc: Loc, msg: string): void {
    this.issues.push({ loc: [...BASE, ...loc], msg: `[${rule}] ${msg}`, type: rule });
  }
  /** An issue in the request schema's own words (`type`, `msg` and `ctx` as the schema check gives them). */
  addPlain(issue: Omit<ValidationIssue, 'loc'> & { loc: Loc }): void {
    this.issues.push({ ...issue, loc: [...BASE, ...issue.loc] });
  }
  /** Numbers of the model refused so far (their value, not a rule about them): the totals count them as 0. */
  refusedNumbers = 0;
}

/**
 * The type of a value with more significant digits than MAX_DIGITS (the service's name, like the
 * BR-DEC-* names of the decimals it limits where EN 16931 does not: decimals.ts says why 15).
 */
export const DIGITS_RULE = 'BR-DEC-DIGITS';

/**
 * Checks one number of the model: a decimal (a string that is not one: `decimal_parsing`, as the
 * schema check would say), at most MAX_DIGITS significant digits (DIGITS_RULE), at most `decimals`
 * decimals (`rule`). Answers the value when it fits, else undefined (one finding per field).
 */
function checkNumber(f: Findings, value: DecimalInput, loc: Loc, decimals: number, rule: string): Decimal | undefined {
  const problem = decimalProblem(value, decimals);
  if (problem === null) return toDecimal(value);
  f.refusedNumbers++;
  if (problem.kind === 'syntax') f.addPlain({ loc, msg: problem.msg, type: 'decimal_parsing' });
  else f.add(problem.kind === 'digits' ? DIGITS_RULE : rule, loc, problem.msg);
  return undefined;
}

/** Categories whose rate must be 0 and which need an exemption reason, with their rule prefix. */
const ZERO_RATED: Record<string, string> = { Z: 'BR-Z', E: 'BR-E', AE: 'BR-AE', K: 'BR-IC', G: 'BR-G' };
const NEEDS_REASON: Record<string, string> = {
  E: 'BR-E-10',
  AE: 'BR-AE-10',
  K: 'BR-IC-10',
  G: 'BR-G-10',
  O: 'BR-O-10',
};

/** True for a real calendar date written YYYY-MM-DD. */
function isCalendarDate(value: string): boolean {
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
}

/** Every rule the invoice breaks for this format and profile; empty when it may be built. */
export function checkBusinessRules(invoice: Invoice, format: EInvoiceFormat): ValidationIssue[] {
  const f = new Findings();
  checkDocument(f, invoice);
  checkParty(f, invoice.seller, 'seller');
  checkParty(f, invoice.buyer, 'buyer');
  checkDeliverTo(f, invoice);
  checkLines(f, invoice);
  (invoice.allowances ?? []).forEach((a, i) => checkAllowanceCharge(f, a, ['allowances', i], 'allowance'));
  (invoice.charges ?? []).forEach((c, i) => checkAllowanceCharge(f, c, ['charges', i], 'charge'));
  checkVat(f, invoice);
  checkPayment(f, invoice);
  // The computed amounts are checked against their limit only when every number they come from fits.
  if (f.refusedNumbers === 0) checkComputedDigits(f, invoice);
  checkSentTotals(f, invoice);
  if (format === 'xrechnung-cii' || format === 'xrechnung-ubl') checkXRechnung(f, invoice);
  return f.issues;
}

function checkDocument(f: Findings, inv: Invoice): void {
  if (inv.type_code !== undefined && !(INVOICE_TYPE_CODES as readonly string[]).includes(inv.type_code)) {
    f.add(
      'BR-CL-01',
      ['type_code'],
      `Invoice type code "${inv.type_code}" is not offered; use one of ${INVOICE_TYPE_CODES.join(', ')}`,
    );
  }
  if (!CURRENCIES.has(inv.currency))
    f.add('BR-CL-04', ['currency'], `"${inv.currency}" is not an ISO 4217 currency code; use e.g. EUR`);
  for (const key of ['issue_date', 'due_date', 'delivery_date'] as const) {
    const value = inv[key];
    if (value !== undefined && !isCalendarDate(value))
      f.add('BR-DEC-DATE', [key], `"${value}" is not a calendar date (YYYY-MM-DD)`);
  }
}

function checkParty(f: Findings, party: InvoiceParty, role: 'seller' | 'buyer'): void {
  const country = party.address.country_code;
  if (!COUNTRIES.has(country))
    f.add(
      'BR-CL-14',
      [role, 'address', 'country_code'],
      `"${country}" is not an ISO 3166-1 alpha-2 country code; use e.g. DE`,
    );
  const scheme = party.electronic_address?.scheme;
  if (scheme !== undefined && !ELECTRONIC_ADDRESS_SCHEMES.has(scheme)) {
    f.add(
      'BR-CL-25',
      [role, 'electronic_address', 'scheme'],
      `"${scheme}" is not an EAS code; use e.g. EM (e-mail) or 0204 (Leitweg-ID)`,
    );
  }
  if (
    role === 'seller' &&
    !party.vat_id &&
    !party.legal_registration_id &&
    !('tax_number' in party && party.tax_number)
  ) {
    f.add(
      'BR-CO-26',
      [role],
      'The seller needs a VAT id (vat_id), a legal registration id or a tax number, so the buyer can identify it',
    );
  }
}

function checkDeliverTo(f: Findings, inv: Invoice): void {
  const country = inv.deliver_to?.address.country_code;
  if (country !== undefined && !COUNTRIES.has(country))
    f.add(
      'BR-CL-14',
      ['deliver_to', 'address', 'country_code'],
      `"${country}" is not an ISO 3166-1 alpha-2 country code; use e.g. FR`,
    );
}

function checkLines(f: Findings, inv: Invoice): void {
  const seen = new Set<string>();
  inv.lines.forEach((line, i) => {
    if (seen.has(line.id))
      f.add('BR-21', ['lines', i, 'id'], `Line id "${line.id}" is used twice; each line needs its own id`);
    seen.add(line.id);
    if (!UNITS.has(line.unit_code))
      f.add(
        'BR-CL-23',
        ['lines', i, 'unit_code'],
        `"${line.unit_code}" is not a UN/ECE Rec 20/21 unit code; use e.g. C62 (one), H87 (piece), HUR (hour)`,
      );
    const price = checkNumber(f, line.net_price, ['lines', i, 'net_price'], PRICE_DECIMALS, 'BR-DEC-PRICE');
    if (price?.lt(0))
      f.add(
        'BR-27',
        ['lines', i, 'net_price'],
        'The item net price must not be negative; invoice a negative quantity instead',
      );
    checkNumber(f, line.quantity, ['lines', i, 'quantity'], QUANTITY_DECIMALS, 'BR-DEC-QUANTITY');
    if (line.vat_category === undefined)
      f.add(
        'BR-CO-04',
        ['lines', i, 'vat_category'],
        'Each line needs a VAT category code (vat_category), e.g. S with vat_rate 19',
      );
    else checkVatCategory(f, line.vat_category, line.vat_rate, ['lines', i]);
  });
}

function checkAllowanceCharge(f: Findings, item: InvoiceAllowanceCharge, loc: Loc, kind: 'allowance' | 'charge'): void {
  const [ruleCategory, ruleReason, ruleReasonCode, reasonList, ruleDecimals] =
    kind === 'allowance'
      ? (['BR-32', 'BR-33', 'BR-CL-19', ALLOWANCE_REASONS, 'BR-DEC-01'] as const)
      : (['BR-37', 'BR-38', 'BR-CL-20', CHARGE_REASONS, 'BR-DEC-05'] as const);
  checkNumber(f, item.amount, [...loc, 'amount'], AMOUNT_DECIMALS, ruleDecimals);
  if (item.vat_category === undefined)
    f.add(ruleCategory, [...loc, 'vat_category'], `Each document ${kind} needs a VAT category code (vat_category)`);
  else checkVatCategory(f, item.vat_category, item.vat_rate, loc);
  if (!item.reason && !item.reason_code) f.add(ruleReason, loc, `A document ${kind} needs a reason or a reason_code`);
  if (item.reason_code !== undefined && !reasonList.has(item.reason_code))
    f.add(ruleReasonCode, [...loc, 'reason_code'], `"${item.reason_code}" is not a ${kind} reason code`);
}

function checkVatCategory(f: Findings, category: string, rateValue: DecimalInput | undefined, loc: Loc): void {
  if (!VAT_CATEGORIES.has(category)) {
    f.add(
      'BR-CL-18',
      [...loc, 'vat_category'],
      `"${category}" is not an EN 16931 VAT category; use one of ${[...VAT_CATEGORIES].join(', ')}`,
    );
    return;
  }
  const rate = rateValue === undefined ? undefined : checkRate(f, rateValue, [...loc, 'vat_rate']);
  // A rate that is not a fitting number has its own finding; the category rules need a number.
  if (rateValue !== undefined && rate === undefined) return;
  if (category === 'S' && !rate?.gt(0))
    f.add('BR-S-05', [...loc, 'vat_rate'], 'A standard-rated (S) item needs a VAT rate above 0');
  const zero = ZERO_RATED[category];
  if (zero && !rate?.isZero()) f.add(`${zero}-05`, [...loc, 'vat_rate'], `Category ${category} needs vat_rate 0`);
  if (category === 'O' && rate !== undefined)
    f.add('BR-O-05', [...loc, 'vat_rate'], 'Category O (not subject to VAT) has no VAT rate; leave vat_rate out');
}

/**
 * A VAT rate: a fitting number (BR-DEC-RATE: at most 2 decimals) from 0 to 100. The schema bounds a
 * JSON number; a decimal string gets the same words here.
 */
function checkRate(f: Findings, value: DecimalInput, loc: Loc): Decimal | undefined {
  const rate = checkNumber(f, value, loc, RATE_DECIMALS, 'BR-DEC-RATE');
  if (rate === undefined || typeof value === 'number' || (rate.gte(0) && rate.lte(100))) return rate;
  f.refusedNumbers++;
  f.addPlain(
    rate.lt(0)
      ? { loc, msg: 'Input should be greater than or equal to 0', type: 'greater_than_equal', ctx: { ge: 0 } }
      : { loc, msg: 'Input should be less than or equal to 100', type: 'less_than_equal', ctx: { le: 100 } },
  );
  return undefined;
}

function checkVat(f: Findings, inv: Invoice): void {
  const categories = new Set(
    [...inv.lines, ...(inv.allowances ?? []), ...(inv.charges ?? [])].map((x) => x.vat_category),
  );
  const seller = inv.seller;
  if (categories.has('S') && !seller.vat_id && !seller.tax_number) {
    f.add(
      'BR-S-02',
      ['seller', 'vat_id'],
      'An invoice with a standard-rated (S) item needs the seller VAT id (seller.vat_id) or tax number (seller.tax_number)',
    );
  }
  for (const [category, prefix] of [
    ['Z', 'BR-Z'],
    ['E', 'BR-E'],
    ['G', 'BR-G'],
  ] as const) {
    if (categories.has(category) && !seller.vat_id && !seller.tax_number)
      f.add(
        `${prefix}-02`,
        ['seller', 'vat_id'],
        `An invoice with category ${category} needs the seller VAT id or tax number`,
      );
  }
  if (categories.has('AE')) {
    if (!seller.vat_id && !seller.tax_number)
      f.add('BR-AE-02', ['seller', 'vat_id'], 'A reverse-charge (AE) invoice needs the seller VAT id');
    if (!inv.buyer.vat_id && !inv.buyer.legal_registration_id)
      f.add('BR-AE-02', ['buyer', 'vat_id'], 'A reverse-charge (AE) invoice needs the buyer VAT id');
  }
  if (categories.has('K')) {
    if (!seller.vat_id)
      f.add('BR-IC-02', ['seller', 'vat_id'], 'An intra-community (K) invoice needs the seller VAT id');
    if (!inv.buyer.vat_id)
      f.add('BR-IC-02', ['buyer', 'vat_id'], 'An intra-community (K) invoice needs the buyer VAT id');
    // The model has no invoicing period (BG-14), so the actual delivery date is the way to satisfy BR-IC-11.
    if (!inv.delivery_date)
      f.add(
        'BR-IC-11',
        ['delivery_date'],
        'An intra-community (K) invoice needs the actual delivery date (delivery_date)',
      );
    if (!inv.deliver_to)
      f.add(
        'BR-IC-12',
        ['deliver_to'],
        'An intra-community (K) invoice needs the deliver to country: add deliver_to {"address": {"country_code": "FR"}}',
      );
  }
  if (categories.has('O') && seller.vat_id)
    f.add(
      'BR-O-02',
      ['seller', 'vat_id'],
      'An invoice with category O (not subject to VAT) must not carry the seller VAT id',
    );
  const reasons = new Set((inv.vat_exemption_reasons ?? []).map((r) => r.vat_category));
  for (const category of categories) {
    const rule = category && NEEDS_REASON[category];
    if (rule && !reasons.has(category))
      f.add(
        rule,
        ['vat_exemption_reasons'],
        `Category ${category} needs an exemption reason: add {"vat_category": "${category}", "reason": "…"}`,
      );
  }
}

const IBAN_MISMATCH = 'its check digits, or its length or format for its country, do not match';

function checkPayment(f: Findings, inv: Invoice): void {
  const payment = inv.payment;
  if (payment && !PAYMENT_MEANS.has(payment.means_code))
    f.add(
      'BR-CL-16',
      ['payment', 'means_code'],
      `"${payment.means_code}" is not a UNTDID 4461 payment means code; use e.g. 58 (SEPA credit transfer)`,
    );
  if (payment && ['30', '58'].includes(payment.means_code) && !payment.iban)
    f.add(
      'BR-61',
      ['payment', 'iban'],
      'A credit transfer (means_code 30 or 58) needs the payee account (payment.iban)',
    );
  // XRechnung publishes BR-DE-19 / BR-DE-20 as warnings; here they refuse the invoice in every format, since
  // an invoice with a mistyped IBAN cannot be paid. Means 30 may name a non-IBAN account, so it is not checked.
  if (payment?.means_code === '58' && payment.iban !== undefined && !isIban(payment.iban)) {
    f.add(
      'BR-DE-19',
      ['payment', 'iban'],
      `payment.iban is not a valid IBAN (${IBAN_MISMATCH}); a SEPA credit transfer (means_code 58) cannot be paid to it`,
    );
  }
  if (payment?.means_code === '59' && payment.debited_account !== undefined && !isIban(payment.debited_account)) {
    f.add(
      'BR-DE-20',
      ['payment', 'debited_account'],
      `payment.debited_account is not a valid IBAN (${IBAN_MISMATCH}); a SEPA direct debit (means_code 59) cannot be collected from it`,
    );
  }
  if (inv.prepaid_amount !== undefined)
    checkNumber(f, inv.prepaid_amount, ['prepaid_amount'], AMOUNT_DECIMALS, 'BR-DEC-16');
  if (computeTotals(inv).amountDue.gt(0) && !inv.due_date && !payment?.terms) {
    f.add(
      'BR-CO-25',
      ['due_date'],
      'An invoice with an amount due needs a due date (due_date) or payment terms (payment.terms)',
    );
  }
}

/**
 * The amounts the service computes, against MAX_DIGITS (DIGITS_RULE): a line net amount on the line's
 * quantity (quantity × net price made it too long), the document's totals on the invoice itself.
 */
function checkComputedDigits(f: Findings, inv: Invoice): void {
  const t = computeTotals(inv);
  t.lineNet.forEach((net, i) => {
    const digits = digitsOf(net);
    if (digits > MAX_DIGITS)
      f.add(
        DIGITS_RULE,
        ['lines', i, 'quantity'],
        `quantity × net_price gives a line net amount (BT-131) of ${formatAmount(net)}: ${digits} significant digits; at most ${MAX_DIGITS}`,
      );
  });
  if (t.lineNet.some((net) => digitsOf(net) > MAX_DIGITS)) return;
  const oversized = oversizedTotals(t);
  if (oversized.length > 0) {
    f.add(
      DIGITS_RULE,
      [],
      `Amounts of this invoice would have more than ${MAX_DIGITS} significant digits: ${oversized.map((o) => `${o.term} ${formatAmount(o.value)}`).join(', ')}`,
    );
  }
}

/** Totals the caller sent, each a fitting amount (BR-DEC-09…18) equal to the computed one (BR-CO-10…16). */
function checkSentTotals(f: Findings, inv: Invoice): void {
  if (!inv.totals) return;
  const t = computeTotals(inv);
  const pairs: [keyof NonNullable<Invoice['totals']>, Decimal, string, string][] = [
    ['line_total', t.lineTotal, 'BR-CO-10', 'BR-DEC-09'],
    ['allowance_total', t.allowanceTotal, 'BR-CO-11', 'BR-DEC-10'],
    ['charge_total', t.chargeTotal, 'BR-CO-12', 'BR-DEC-11'],
    ['tax_exclusive', t.taxExclusive, 'BR-CO-13', 'BR-DEC-12'],
    ['tax_total', t.taxTotal, 'BR-CO-14', 'BR-DEC-13'],
    ['tax_inclusive', t.taxInclusive, 'BR-CO-15', 'BR-DEC-14'],
    ['amount_due', t.amountDue, 'BR-CO-16', 'BR-DEC-18'],
  ];
  for (const [key, computed, rule, decimalsRule] of pairs) {
    const value = inv.totals[key];
    if (value === undefined) continue;
    const sent = checkNumber(f, value, ['totals', key], AMOUNT_DECIMALS, decimalsRule);
    if (sent !== undefined && !sent.eq(computed))
      f.add(
        rule,
        ['totals', key],
        `${key} is ${sent.toFixed()}, but the lines, allowances, charges and VAT give ${formatAmount(computed)}`,
      );
  }
}

/** XRechnung 3.0 (BR-DE-*): what German public buyers require on top of EN 16931. */
function checkXRechnung(f: Findings, inv: Invoice): void {
  if (!inv.buyer_reference)
    f.add(
      'BR-DE-15',
      ['buyer_reference'],
      'XRechnung needs the buyer reference (buyer_reference), e.g. the Leitweg-ID',
    );
  if (!inv.payment) f.add('BR-DE-1', ['payment'], 'XRechnung needs payment instructions (payment with means_code)');
  const contact = inv.seller.contact;
  if (!contact)
    f.add(
      'BR-DE-2',
      ['seller', 'contact'],
      'XRechnung needs a seller contact (seller.contact with name, phone and email)',
    );
  else {
    if (!contact.name) f.add('BR-DE-5', ['seller', 'contact', 'name'], 'XRechnung needs the seller contact name');
    if (!contact.phone)
      f.add('BR-DE-6', ['seller', 'contact', 'phone'], 'XRechnung needs the seller contact telephone');
    if (!contact.email) f.add('BR-DE-7', ['seller', 'contact', 'email'], 'XRechnung needs the seller contact e-mail');
  }
  if (!inv.seller.address.city) f.add('BR-DE-3', ['seller', 'address', 'city'], 'XRechnung needs the seller city');
  if (!inv.seller.address.postal_code)
    f.add('BR-DE-4', ['seller', 'address', 'postal_code'], 'XRechnung needs the seller post code');
  if (!inv.buyer.address.city) f.add('BR-DE-8', ['buyer', 'address', 'city'], 'XRechnung needs the buyer city');
  if (!inv.buyer.address.postal_code)
    f.add('BR-DE-9', ['buyer', 'address', 'postal_code'], 'XRechnung needs the buyer post code');
  const deliverTo = inv.deliver_to?.address;
  if (deliverTo && !deliverTo.city)
    f.add(
      'BR-DE-10',
      ['deliver_to', 'address', 'city'],
      'XRechnung needs the deliver to city when there is a deliver to address',
    );
  if (deliverTo && !deliverTo.postal_code)
    f.add(
      'BR-DE-11',
      ['deliver_to', 'address', 'postal_code'],
      'XRechnung needs the deliver to post code when there is a deliver to address',
    );
  if (inv.payment) checkXRechnungDirectDebit(f, inv.payment);
}

/**
 * A direct debit in XRechnung: the mandate (BG-19) and no payee account. EN 16931 and Factur-X make
 * none of this mandatory; XRechnung 3.0.2 does, for CII and UBL alike:
 * PEPPOL-EN16931-R061 the mandate reference (BT-89) with means 59 or 49; BR-DE-25-a a SEPA direct debit (59)
 * with no BG-19 at all; BR-DE-30 / BR-DE-31 the creditor id (BT-90) and the debited account (BT-91) once
 * there is a BG-19 (a direct debit has one, by R061); BR-DE-25-b no payee account (BG-17: BT-84…86) with 59.
 */
function checkXRechnungDirectDebit(f: Findings, p: NonNullable<Invoice['payment']>): void {
  const directDebit = p.means_code === '59' || p.means_code === '49';
  const mandate = p.mandate_reference !== undefined || p.creditor_id !== undefined || p.debited_account !== undefined;
  if (p.means_code === '59' && !mandate) {
    f.add(
      'BR-DE-25-a',
      ['payment'],
      'XRechnung needs the direct debit mandate (BG-19) with a SEPA direct debit (means_code 59): payment.mandate_reference, payment.creditor_id and payment.debited_account',
    );
  }
  if (directDebit && p.mandate_reference === undefined) {
    f.add(
      'PEPPOL-EN16931-R061',
      ['payment', 'mandate_reference'],
      `XRechnung needs the mandate reference (payment.mandate_reference) with a direct debit (means_code ${p.means_code})`,
    );
  }
  if ((directDebit || mandate) && p.creditor_id === undefined) {
    f.add(
      'BR-DE-30',
      ['payment', 'creditor_id'],
      'XRechnung needs the bank assigned creditor identifier (payment.creditor_id, e.g. the SEPA creditor id) with a direct debit mandate',
    );
  }
  if ((directDebit || mandate) && p.debited_account === undefined) {
    f.add(
      'BR-DE-31',
      ['payment', 'debited_account'],
      "XRechnung needs the debited account (payment.debited_account, the buyer's IBAN) with a direct debit mandate",
    );
  }
  if (p.means_code === '59') {
    for (const key of ['iban', 'bic', 'account_name'] as const) {
      if (p[key] !== undefined)
        f.add(
          'BR-DE-25-b',
          ['payment', key],
          `XRechnung: a SEPA direct debit (means_code 59) must not carry the payee account (BG-17); leave payment.${key} out (the buyer's account is payment.debited_account)`,
        );
    }
  }
}
