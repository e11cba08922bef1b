/**
 * The EN 16931 arithmetic on a customer's own XML (`einvoice: {format, xml}`, supplied-xml.ts): the
 * totals the document states, each against the parts it states (BR-CO-10…17). An invoice built from
 * the JSON model gets its totals from totals.ts and cannot break these; an XML the customer built can,
 * and a wrong total is the mistake the official validators most often find. Only rules whose inputs
 * the document carries are checked (MINIMUM has no lines and no BT-106, BASIC WL no lines), so an
 * absent optional total is never a finding: the schematron's presence rules are not repeated here.
 *
 * libxml2 finds the elements, with namespace-aware XPath (readXml), so an element of another namespace
 * with the same local name (a UBL extension, say) is never taken for one of these: one expression for
 * the totals and the counts, then one per list of amounts to add up (the lines', the allowances', the
 * charges', the breakdown's VAT), each run only when the document has such elements. Every amount is
 * read as written into an exact decimal (decimals.ts) and the sums are exact; XPath's own sum() would
 * add binary doubles. Amounts with more than 2 decimals are left alone (that is BR-DEC-*, not arithmetic),
 * and so are amounts that are not plain decimals of at most XML_AMOUNT_MAX_DIGITS digits (the rules
 * needing one are not checked). Comparisons are exact, as the CEN schematron's are, except BR-CO-17
 * (a category's VAT = its taxable amount × its rate, rounded), which allows a difference of 0.01 so
 * that a rounding convention of the customer's is never refused.
 */
import type { ValidationIssue } from '../../shared/errors.js';
import {
  AMOUNT_DECIMALS,
  digitsOf,
  Exact,
  formatAmount,
  formatDecimal,
  RATE_DECIMALS,
  XML_AMOUNT_MAX_DIGITS,
  type Decimal,
} from '../decimals.js';
import type { EInvoiceProfile } from '../invoice-schema.js';
import { categoryTax } from '../totals.js';
import { readXml, XML_NS, xpathElement as el, xpathIndicatorIs } from '../xmllint/xml-schema-check.js';

export type Syntax = 'cii' | 'ubl';

const { rsm: RSM, ram: RAM, udt: UDT, cac: CAC, cbc: CBC } = XML_NS;

/**
 * VAT breakdown groups read one by one (BR-CO-17); BR-CO-14 sums all of them whatever their number.
 * More than an invoice has (one group per category and rate), and a bound on the one XPath expression:
 * xmllint.wasm failed ("memory access out of bounds") on the expression for 40.
 */
const MAX_GROUPS = 16;

/** The business terms read, and where each syntax keeps them (XPath, and the name a message shows). */
interface Places {
  lines: string;
  /** Lines that belong to another line (Factur-X EXTENDED's sub-lines): their amounts need not add up as BR-CO-10 reads. */
  subLines: string;
  lineTotal: string;
  allowanceTotal: string;
  chargeTotal: string;
  taxExclusive: string;
  taxTotal: string;
  taxInclusive: string;
  prepaid: string;
  rounding: string;
  amountDue: string;
  allowances: string;
  charges: string;
  groups: string;
  groupTaxable: string;
  groupTax: string;
  groupRate: string;
  /** The local names of the amounts whose sums are checked: lines, allowances and charges (one name), the breakdown's VAT. */
  listed: Record<'lines' | 'allowances' | 'groupTaxes', string>;
  names: Record<
    'lineTotal' | 'allowanceTotal' | 'chargeTotal' | 'taxExclusive' | 'taxTotal' | 'taxInclusive' | 'amountDue',
    string
  >;
}

function ciiPlaces(): Places {
  const ram = (name: string) => el(name, RAM);
  const transaction = `/*/${el('SupplyChainTradeTransaction', RSM)}`;
  const settlement = `${transaction}/${ram('ApplicableHeaderTradeSettlement')}`;
  const sums = `${settlement}/${ram('SpecifiedTradeSettlementHeaderMonetarySummation')}`;
  const allowanceCharge = (charge: boolean) =>
    `${settlement}/${ram('SpecifiedTradeAllowanceCharge')}[${xpathIndicatorIs(`${ram('ChargeIndicator')}/${el('Indicator', UDT)}`, charge)}]/${ram('ActualAmount')}`;
  const taxTotals = `${sums}/${ram('TaxTotalAmount')}`;
  return {
    subLines: `${transaction}/${ram('IncludedSupplyChainTradeLineItem')}[${ram('AssociatedDocumentLineDocument')}/${ram('ParentLineID')} or ${ram('AssociatedDocumentLineDocument')}/${ram('LineStatusReasonCode')}]`,
    lines: `${transaction}/${ram('IncludedSupplyChainTradeLineItem')}/${ram('SpecifiedLineTradeSettlement')}/${ram('SpecifiedTradeSettlementLineMonetarySummation')}/${ram('LineTotalAmount')}`,
    lineTotal: `${sums}/${ram('LineTotalAmount')}`,
    allowanceTotal: `${sums}/${ram('AllowanceTotalAmount')}`,
    chargeTotal: `${sums}/${ram('ChargeTotalAmount')}`,
    taxExclusive: `${sums}/${ram('TaxBasisTotalAmount')}`,
    // BT-110 is the VAT total in the invoice's currency (a second one may state it in the VAT currency, BT-111).
    taxTotal: `(${taxTotals}[@currencyID = ${settlement}/${ram('InvoiceCurrencyCode')}] | ${taxTotals}[not(@currencyID)])[1]`,
    taxInclusive: `${sums}/${ram('GrandTotalAmount')}`,
    prepaid: `${sums}/${ram('TotalPrepaidAmount')}`,
    rounding: `${sums}/${ram('RoundingAmount')}`,
    amountDue: `${sums}/${ram('DuePayableAmount')}`,
    allowances: allowanceCharge(false),
    charges: allowanceCharge(true),
    groups: `${settlement}/${ram('ApplicableTradeTax')}`,
    groupTaxable: ram('BasisAmount'),
    groupTax: ram('CalculatedAmount'),
    groupRate: ram('RateApplicablePercent'),
    listed: { lines: 'LineTotalAmount', allowances: 'ActualAmount', groupTaxes: 'CalculatedAmount' },
    names: {
      lineTotal: 'ram:LineTotalAmount',
      allowanceTotal: 'ram:AllowanceTotalAmount',
      chargeTotal: 'ram:ChargeTotalAmount',
      taxExclusive: 'ram:TaxBasisTotalAmount',
      taxTotal: 'ram:TaxTotalAmount',
      taxInclusive: 'ram:GrandTotalAmount',
      amountDue: 'ram:DuePayableAmount',
    },
  };
}

function ublPlaces(): Places {
  const cac = (name: string) => el(name, CAC);
  const cbc = (name: string) => el(name, CBC);
  const totals = `/*/${cac('LegalMonetaryTotal')}`;
  // The TaxTotal in the document's currency holds BT-110 and the breakdown; another may state BT-111.
  const taxTotal = `/*/${cac('TaxTotal')}[${cbc('TaxAmount')}/@currencyID = /*/${cbc('DocumentCurrencyCode')}]`;
  const allowanceCharge = (charge: boolean) =>
    `/*/${cac('AllowanceCharge')}[${xpathIndicatorIs(cbc('ChargeIndicator'), charge)}]/${cbc('Amount')}`;
  return {
    // Sub-lines (cac:SubInvoiceLine) sit inside their line and are not read.
    subLines: `/*/${cac('InvoiceLine')}[false()]`,
    // One path, not a union: libxml2 merges a union's node sets in time that grows with their product.
    lines: `/*/*[(local-name()='InvoiceLine' or local-name()='CreditNoteLine') and namespace-uri()='${CAC}']/${cbc('LineExtensionAmount')}`,
    lineTotal: `${totals}/${cbc('LineExtensionAmount')}`,
    allowanceTotal: `${totals}/${cbc('AllowanceTotalAmount')}`,
    chargeTotal: `${totals}/${cbc('ChargeTotalAmount')}`,
    taxExclusive: `${totals}/${cbc('TaxExclusiveAmount')}`,
    taxTotal: `${taxTotal}/${cbc('TaxAmount')}`,
    taxInclusive: `${totals}/${cbc('TaxInclusiveAmount')}`,
    prepaid: `${totals}/${cbc('PrepaidAmount')}`,
    rounding: `${totals}/${cbc('PayableRoundingAmount')}`,
    amountDue: `${totals}/${cbc('PayableAmount')}`,
    allowances: allowanceCharge(false),
    charges: allowanceCharge(true),
    groups: `${taxTotal}/${cac('TaxSubtotal')}`,
    groupTaxable: cbc('TaxableAmount'),
    groupTax: cbc('TaxAmount'),
    groupRate: `${cac('TaxCategory')}/${cbc('Percent')}`,
    listed: { lines: 'LineExtensionAmount', allowances: 'Amount', groupTaxes: 'TaxAmount' },
    names: {
      lineTotal: 'cac:LegalMonetaryTotal/cbc:LineExtensionAmount',
      allowanceTotal: 'cbc:AllowanceTotalAmount',
      chargeTotal: 'cbc:ChargeTotalAmount',
      taxExclusive: 'cbc:TaxExclusiveAmount',
      taxTotal: 'cac:TaxTotal/cbc:TaxAmount',
      taxInclusive: 'cbc:TaxInclusiveAmount',
      amountDue: 'cbc:PayableAmount',
    },
  };
}

const PLACES: Record<Syntax, Places> = { cii: ciiPlaces(), ubl: ublPlaces() };

/** What the document states; undefined where it states nothing (or nothing usable). */
export interface StatedTotals {
  lineCount: number;
  subLineCount: number;
  lineSum: Decimal | undefined;
  lineTotal?: Decimal;
  allowanceTotal?: Decimal;
  chargeTotal?: Decimal;
  taxExclusive?: Decimal;
  taxTotal?: Decimal;
  taxInclusive?: Decimal;
  prepaid?: Decimal;
  rounding?: Decimal;
  amountDue?: Decimal;
  allowanceSum: Decimal | undefined;
  chargeSum: Decimal | undefined;
  groupCount: number;
  groupTaxSum: Decimal | undefined;
  groups: { taxable?: Decimal; tax?: Decimal; rate?: Decimal }[];
}

/** xs:decimal's lexical form, once the whitespace the type collapses is trimmed. */
const XML_DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;

/** A number as written, exactly; undefined when empty, not a plain decimal, or longer than XML_AMOUNT_MAX_DIGITS digits. */
function writtenNumber(text: string): Decimal | undefined {
  const t = text.trim();
  // Leading and trailing zeros aside, a longer text has too many digits: bounded before it is parsed.
  if (t === '' || t.length > 4 * XML_AMOUNT_MAX_DIGITS || !XML_DECIMAL.test(t)) return undefined;
  const d = new Exact(t);
  return digitsOf(d) > XML_AMOUNT_MAX_DIGITS ? undefined : d;
}

/** An amount as written; undefined as writtenNumber, and with more than 2 decimals (BR-DEC-*'s business). */
function writtenAmount(text: string): Decimal | undefined {
  const d = writtenNumber(text);
  return d === undefined || d.decimalPlaces() > AMOUNT_DECIMALS ? undefined : d;
}

/**
 * One element as xmllint prints a node of a node set (`<p:Name attr="…">text</p:Name>`, one a line):
 * its local name and its content, which may hold comments, processing instructions and CDATA sections
 * besides text (libxml2 prints them as they were). An element with a child does not match: its list
 * comes up short, and its sum is not used.
 */
const PRINTED_ELEMENT =
  /<(?:[^\s<>/:]+:)?([^\s<>/:]+)(?:\s[^<>]*)?>((?:[^<]|<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!\[CDATA\[[\s\S]*?\]\]>)*)<\/[^\s<>]+>/g;
/** An element's text, as XPath's string value has it: without comments and processing instructions, CDATA sections as their text. */
const textOf = (content: string) =>
  content.replace(/<!--[\s\S]*?-->|<\?[\s\S]*?\?>/g, '').replace(/<!\[CDATA\[([\s\S]*?)\]\]>/g, '$1');

/**
 * Amounts read and added between two turns of the event loop: a 5 MiB document can list tens of
 * thousands, and reading them on the server's thread in one go would hold up every other request.
 */
const SLICE = 1000;

/**
 * The sum of the amounts `path` selects (elements named `name`), exact, rounded to cents as the
 * schematron rounds its sums; undefined when one of them is unusable or when another number than
 * `expected` was read. One libxml2 run; the path is not a union (see ublPlaces) and selects at least
 * one element (xmllint fails on an empty node set).
 */
async function listedSum(
  xml: string,
  path: string,
  name: string,
  expected: number,
  accountId: string,
): Promise<Decimal | undefined> {
  const { value } = await readXml(xml, path, accountId);
  if (value === null)
    throw new Error('readStatedTotals: the XML was not parsed (it is checked for well-formedness before)');
  let total = new Exact(0);
  let count = 0;
  for (const [, local, content] of value.matchAll(PRINTED_ELEMENT)) {
    if (local !== name) continue;
    const amount = writtenNumber(textOf(content!));
    if (amount === undefined) return undefined;
    total = total.plus(amount);
    if (++count % SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  return count === expected ? total.toDecimalPlaces(AMOUNT_DECIMALS) : undefined;
}

const AMOUNTS = [
  'lineTotal',
  'allowanceTotal',
  'chargeTotal',
  'taxExclusive',
  'taxTotal',
  'taxInclusive',
  'prepaid',
  'rounding',
  'amountDue',
] as const;

/** Reads the stated totals of a well-formed CII or UBL document for `accountId`: one libxml2 run, then one per list of amounts to add up. */
export async function readStatedTotals(xml: string, syntax: Syntax, accountId: string): Promise<StatedTotals> {
  const p = PLACES[syntax];
  const parts = [
    `count(${p.lines})`,
    `count(${p.subLines})`,
    ...AMOUNTS.map((name) => `string(${p[name]})`),
    `count(${p.allowances})`,
    `count(${p.charges})`,
    `count(${p.groups})`,
    `count(${p.groups}/${p.groupTax})`,
    ...Array.from({ length: MAX_GROUPS }, (_, i) => [
      `string((${p.groups})[${i + 1}]/${p.groupTaxable})`,
      `string((${p.groups})[${i + 1}]/${p.groupTax})`,
      `string((${p.groups})[${i + 1}]/${p.groupRate})`,
    ]).flat(),
  ];
  const { value } = await readXml(xml, `concat(${parts.join(", '\n', ")})`, accountId);
  if (value === null)
    throw new Error('readStatedTotals: the XML was not parsed (it is checked for well-formedness before)');
  const v = value.split('\n');
  let at = 0;
  const next = () => v[at++] ?? '';
  const lineCount = Number(next());
  const subLineCount = Number(next());
  const stated: Partial<Record<(typeof AMOUNTS)[number], Decimal>> = {};
  for (const name of AMOUNTS) {
    const amount = writtenAmount(next());
    if (amount !== undefined) stated[name] = amount;
  }
  const allowanceCount = Number(next());
  const chargeCount = Number(next());
  const groupCount = Number(next());
  const groupTaxCount = Number(next());
  const groups: StatedTotals['groups'] = [];
  for (let i = 0; i < Math.min(groupCount, MAX_GROUPS); i++) {
    const taxable = writtenAmount(next());
    const tax = writtenAmount(next());
    const rate = writtenNumber(next());
    groups.push({
      ...(taxable !== undefined ? { taxable } : {}),
      ...(tax !== undefined ? { tax } : {}),
      ...(rate !== undefined ? { rate } : {}),
    });
  }
  // A list is read only when the document has its elements, each in a run of its own (no union; see ublPlaces).
  const list = (count: number, path: string, name: string): Promise<Decimal | undefined> =>
    count === 0 ? Promise.resolve(new Exact(0)) : listedSum(xml, path, name, count, accountId);
  const [lineSum, allowanceSum, chargeSum, groupTaxSum] = await Promise.all([
    list(lineCount, p.lines, p.listed.lines),
    list(allowanceCount, p.allowances, p.listed.allowances),
    list(chargeCount, p.charges, p.listed.allowances),
    list(groupTaxCount, `${p.groups}/${p.groupTax}`, p.listed.groupTaxes),
  ]);
  return { lineCount, subLineCount, lineSum, ...stated, allowanceSum, chargeSum, groupCount, groupTaxSum, groups };
}

/**
 * Every BR-CO-10…17 rule the stated totals break; `loc` is the XML as a whole. Factur-X MINIMUM has no
 * place for a prepaid amount or a rounding amount (BT-113, BT-114), so its amount due is not checked;
 * a document with sub-lines (EXTENDED) is not checked against BR-CO-10.
 */
export function statedTotalsIssues(
  t: StatedTotals,
  syntax: Syntax,
  profile: EInvoiceProfile,
  loc: readonly (string | number)[],
): ValidationIssue[] {
  const names = PLACES[syntax].names;
  const issues: ValidationIssue[] = [];
  const add = (rule: string, msg: string) => issues.push({ loc: [...loc], msg: `[${rule}] ${msg}`, type: rule });
  const c = formatAmount;
  const check = (
    rule: string,
    stated: Decimal | undefined,
    expected: Decimal | undefined,
    what: string,
    how: string,
  ) => {
    if (stated !== undefined && expected !== undefined && !stated.eq(expected))
      add(rule, `${what} is ${c(stated)}, but ${how} is ${c(expected)}`);
  };
  const zero = new Exact(0);
  if (t.lineCount > 0 && t.subLineCount === 0)
    check(
      'BR-CO-10',
      t.lineTotal,
      t.lineSum,
      `The sum of line net amounts (BT-106, ${names.lineTotal})`,
      `the sum of the ${t.lineCount} lines' net amounts`,
    );
  check(
    'BR-CO-11',
    t.allowanceTotal,
    t.allowanceSum,
    `The sum of document allowances (BT-107, ${names.allowanceTotal})`,
    'the sum of the document level allowances',
  );
  check(
    'BR-CO-12',
    t.chargeTotal,
    t.chargeSum,
    `The sum of document charges (BT-108, ${names.chargeTotal})`,
    'the sum of the document level charges',
  );
  const taxExclusive =
    t.lineTotal === undefined ? undefined : t.lineTotal.minus(t.allowanceTotal ?? zero).plus(t.chargeTotal ?? zero);
  check(
    'BR-CO-13',
    t.taxExclusive,
    taxExclusive,
    `The total without VAT (BT-109, ${names.taxExclusive})`,
    'BT-106 − BT-107 + BT-108',
  );
  if (t.groupCount > 0)
    check(
      'BR-CO-14',
      t.taxTotal,
      t.groupTaxSum,
      `The VAT total (BT-110, ${names.taxTotal})`,
      `the sum of the ${t.groupCount} VAT breakdown amounts (BT-117)`,
    );
  const taxInclusive = t.taxExclusive === undefined ? undefined : t.taxExclusive.plus(t.taxTotal ?? zero);
  check(
    'BR-CO-15',
    t.taxInclusive,
    taxInclusive,
    `The total with VAT (BT-112, ${names.taxInclusive})`,
    'BT-109 + BT-110',
  );
  const amountDue =
    t.taxInclusive === undefined ? undefined : t.taxInclusive.minus(t.prepaid ?? zero).plus(t.rounding ?? zero);
  if (profile !== 'minimum')
    check(
      'BR-CO-16',
      t.amountDue,
      amountDue,
      `The amount due (BT-115, ${names.amountDue})`,
      'BT-112 − BT-113 + BT-114',
    );
  t.groups.forEach((g, i) => {
    // A rate with more than 2 decimals is BR-DEC-*'s business, not this arithmetic's.
    if (
      g.taxable === undefined ||
      g.tax === undefined ||
      g.rate === undefined ||
      g.rate.decimalPlaces() > RATE_DECIMALS
    )
      return;
    const expected = categoryTax(g.taxable, g.rate);
    if (g.tax.minus(expected).abs().gt(CENT))
      add(
        'BR-CO-17',
        `VAT breakdown ${i + 1}: its VAT amount (BT-117) is ${c(g.tax)}, but its taxable amount ${c(g.taxable)} × ${formatDecimal(g.rate)} % is ${c(expected)}`,
      );
  });
  return issues;
}

/** BR-CO-17's allowance for a rounding convention. */
const CENT = new Exact('0.01');
