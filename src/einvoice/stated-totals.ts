/**
 * The EN 16931 arithmetic on a customer's own XML (`einvoice: {format, xml}`, supplied-xml.ts): the
 * totals the document states, each against the parts it states (BR-CO-10…17). An invoice built from
 * the JSON model gets its totals from totals.ts and cannot break these; an XML the customer built can,
 * and a wrong total is the mistake the official validators most often find. Only rules whose inputs
 * the document carries are checked (MINIMUM has no lines and no BT-106, BASIC WL no lines), so an
 * absent optional total is never a finding: the schematron's presence rules are not repeated here.
 *
 * The numbers are read by libxml2 with one namespace-aware XPath expression (readXml), so an element
 * of another namespace with the same local name (a UBL extension, say) is never taken for one of
 * these. Sums of many amounts come from XPath's sum() (a double, rounded to cents, which is exact for
 * any realistic invoice); stated amounts are read as written. Amounts with more than 2 decimals are
 * left alone (that is BR-DEC-*, not arithmetic). Comparisons are exact in cents, as the CEN
 * schematron's are, except BR-CO-17 (a category's VAT = its taxable amount × its rate, rounded),
 * which allows a difference of 0.01 so that a rounding convention of the customer's is never refused.
 */
import type { ValidationIssue } from '../shared/errors.js';
import type { EInvoiceProfile } from './invoice-schema.js';
import { categoryTaxCents, formatCents, toScaled, type Cents } from './totals.js';
import { readXml, XML_NS, xpathElement as el, xpathIndicatorIs } from './xml-schema-check.js';

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
  lineTotal: string; allowanceTotal: string; chargeTotal: string; taxExclusive: string; taxTotal: string;
  taxInclusive: string; prepaid: string; rounding: string; amountDue: string;
  allowances: string; charges: string;
  groups: string; groupTaxable: string; groupTax: string; groupRate: string;
  names: Record<'lineTotal' | 'allowanceTotal' | 'chargeTotal' | 'taxExclusive' | 'taxTotal' | 'taxInclusive' | 'amountDue', string>;
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
    names: {
      lineTotal: 'ram:LineTotalAmount', allowanceTotal: 'ram:AllowanceTotalAmount', chargeTotal: 'ram:ChargeTotalAmount',
      taxExclusive: 'ram:TaxBasisTotalAmount', taxTotal: 'ram:TaxTotalAmount', taxInclusive: 'ram:GrandTotalAmount', amountDue: 'ram:DuePayableAmount',
    },
  };
}

function ublPlaces(): Places {
  const cac = (name: string) => el(name, CAC);
  const cbc = (name: string) => el(name, CBC);
  const totals = `/*/${cac('LegalMonetaryTotal')}`;
  // The TaxTotal in the document's currency holds BT-110 and the breakdown; another may state BT-111.
  const taxTotal = `/*/${cac('TaxTotal')}[${cbc('TaxAmount')}/@currencyID = /*/${cbc('DocumentCurrencyCode')}]`;
  const allowanceCharge = (charge: boolean) => `/*/${cac('AllowanceCharge')}[${xpathIndicatorIs(cbc('ChargeIndicator'), charge)}]/${cbc('Amount')}`;
  return {
    // Sub-lines (cac:SubInvoiceLine) sit inside their line and are not read.
    subLines: `/*/${cac('InvoiceLine')}[false()]`,
    lines: `/*/${cac('InvoiceLine')}/${cbc('LineExtensionAmount')} | /*/${cac('CreditNoteLine')}/${cbc('LineExtensionAmount')}`,
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
    names: {
      lineTotal: 'cac:LegalMonetaryTotal/cbc:LineExtensionAmount', allowanceTotal: 'cbc:AllowanceTotalAmount', chargeTotal: 'cbc:ChargeTotalAmount',
      taxExclusive: 'cbc:TaxExclusiveAmount', taxTotal: 'cac:TaxTotal/cbc:TaxAmount', taxInclusive: 'cbc:TaxInclusiveAmount', amountDue: 'cbc:PayableAmount',
    },
  };
}

const PLACES: Record<Syntax, Places> = { cii: ciiPlaces(), ubl: ublPlaces() };

/** What the document states, in cents; undefined where it states nothing (or nothing usable). */
export interface StatedTotals {
  lineCount: number; subLineCount: number; lineSum: Cents | undefined;
  lineTotal?: Cents; allowanceTotal?: Cents; chargeTotal?: Cents; taxExclusive?: Cents; taxTotal?: Cents;
  taxInclusive?: Cents; prepaid?: Cents; rounding?: Cents; amountDue?: Cents;
  allowanceSum: Cents | undefined; chargeSum: Cents | undefined;
  groupCount: number; groupTaxSum: Cents | undefined;
  groups: { taxable?: Cents; tax?: Cents; rate?: number }[];
}

/** An amount as written, in cents (totals.toScaled); undefined when empty, not a number or with more than 2 decimals. */
function writtenCents(text: string): Cents | undefined {
  return text.trim() === '' ? undefined : toScaled(Number(text), 2);
}

/** A sum() result (an XPath number printed by libxml2), rounded to cents; undefined for NaN. */
function summedCents(text: string): Cents | undefined {
  const x = Number(text);
  return text.trim() === '' || !Number.isFinite(x) ? undefined : BigInt(Math.round(x * 100));
}

const AMOUNTS = ['lineTotal', 'allowanceTotal', 'chargeTotal', 'taxExclusive', 'taxTotal', 'taxInclusive', 'prepaid', 'rounding', 'amountDue'] as const;

/** Reads the stated totals of a well-formed CII or UBL document (one libxml2 run, for `accountId`). */
export async function readStatedTotals(xml: string, syntax: Syntax, accountId: string): Promise<StatedTotals> {
  const p = PLACES[syntax];
  const parts = [
    `count(${p.lines})`, `count(${p.subLines})`, `sum(${p.lines})`,
    ...AMOUNTS.map((name) => `string(${p[name]})`),
    `sum(${p.allowances})`, `sum(${p.charges})`,
    `count(${p.groups})`, `sum(${p.groups}/${p.groupTax})`,
    ...Array.from({ length: MAX_GROUPS }, (_, i) => [`string((${p.groups})[${i + 1}]/${p.groupTaxable})`, `string((${p.groups})[${i + 1}]/${p.groupTax})`, `string((${p.groups})[${i + 1}]/${p.groupRate})`]).flat(),
  ];
  const { value } = await readXml(xml, `concat(${parts.join(", '\n', ")})`, accountId);
  if (value === null) throw new Error('readStatedTotals: the XML was not parsed (it is checked for well-formedness before)');
  const v = value.split('\n');
  let at = 0;
  const next = () => v[at++] ?? '';
  const lineCount = Number(next());
  const subLineCount = Number(next());
  const lineSum = summedCents(next());
  const stated: Partial<Record<(typeof AMOUNTS)[number], Cents>> = {};
  for (const name of AMOUNTS) {
    const cents = writtenCents(next());
    if (cents !== undefined) stated[name] = cents;
  }
  const allowanceSum = summedCents(next());
  const chargeSum = summedCents(next());
  const groupCount = Number(next());
  const groupTaxSum = summedCents(next());
  const groups: StatedTotals['groups'] = [];
  for (let i = 0; i < Math.min(groupCount, MAX_GROUPS); i++) {
    const taxable = writtenCents(next());
    const tax = writtenCents(next());
    const rateText = next().trim();
    const rate = rateText === '' || !Number.isFinite(Number(rateText)) ? undefined : Number(rateText);
    groups.push({ ...(taxable !== undefined ? { taxable } : {}), ...(tax !== undefined ? { tax } : {}), ...(rate !== undefined ? { rate } : {}) });
  }
  return { lineCount, subLineCount, lineSum, ...stated, allowanceSum, chargeSum, groupCount, groupTaxSum, groups };
}

/**
 * Every BR-CO-10…17 rule the stated totals break; `loc` is the XML as a whole. Factur-X MINIMUM has no
 * place for a prepaid amount or a rounding amount (BT-113, BT-114), so its amount due is not checked;
 * a document with sub-lines (EXTENDED) is not checked against BR-CO-10.
 */
export function statedTotalsIssues(t: StatedTotals, syntax: Syntax, profile: EInvoiceProfile, loc: readonly (string | number)[]): ValidationIssue[] {
  const names = PLACES[syntax].names;
  const issues: ValidationIssue[] = [];
  const add = (rule: string, msg: string) => issues.push({ loc: [...loc], msg: `[${rule}] ${msg}`, type: rule });
  const c = formatCents;
  const check = (rule: string, stated: Cents | undefined, expected: Cents | undefined, what: string, how: string) => {
    if (stated !== undefined && expected !== undefined && stated !== expected) add(rule, `${what} is ${c(stated)}, but ${how} is ${c(expected)}`);
  };
  if (t.lineCount > 0 && t.subLineCount === 0) check('BR-CO-10', t.lineTotal, t.lineSum, `The sum of line net amounts (BT-106, ${names.lineTotal})`, `the sum of the ${t.lineCount} lines' net amounts`);
  check('BR-CO-11', t.allowanceTotal, t.allowanceSum, `The sum of document allowances (BT-107, ${names.allowanceTotal})`, 'the sum of the document level allowances');
  check('BR-CO-12', t.chargeTotal, t.chargeSum, `The sum of document charges (BT-108, ${names.chargeTotal})`, 'the sum of the document level charges');
  const taxExclusive = t.lineTotal === undefined ? undefined : t.lineTotal - (t.allowanceTotal ?? 0n) + (t.chargeTotal ?? 0n);
  check('BR-CO-13', t.taxExclusive, taxExclusive, `The total without VAT (BT-109, ${names.taxExclusive})`, 'BT-106 − BT-107 + BT-108');
  if (t.groupCount > 0) check('BR-CO-14', t.taxTotal, t.groupTaxSum, `The VAT total (BT-110, ${names.taxTotal})`, `the sum of the ${t.groupCount} VAT breakdown amounts (BT-117)`);
  const taxInclusive = t.taxExclusive === undefined ? undefined : t.taxExclusive + (t.taxTotal ?? 0n);
  check('BR-CO-15', t.taxInclusive, taxInclusive, `The total with VAT (BT-112, ${names.taxInclusive})`, 'BT-109 + BT-110');
  const amountDue = t.taxInclusive === undefined ? undefined : t.taxInclusive - (t.prepaid ?? 0n) + (t.rounding ?? 0n);
  if (profile !== 'minimum') check('BR-CO-16', t.amountDue, amountDue, `The amount due (BT-115, ${names.amountDue})`, 'BT-112 − BT-113 + BT-114');
  t.groups.forEach((g, i) => {
    // A rate with more than 2 decimals is BR-DEC-*'s business, not this arithmetic's.
    if (g.taxable === undefined || g.tax === undefined || g.rate === undefined || toScaled(g.rate, 2) === undefined) return;
    const expected = categoryTaxCents(g.taxable, g.rate);
    const difference = g.tax > expected ? g.tax - expected : expected - g.tax;
    if (difference > 1n) add('BR-CO-17', `VAT breakdown ${i + 1}: its VAT amount (BT-117) is ${c(g.tax)}, but its taxable amount ${c(g.taxable)} × ${g.rate} % is ${c(expected)}`);
  });
  return issues;
}
