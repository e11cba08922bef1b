/**
 * The EN 16931 code lists on a customer's own XML (`einvoice: {format, xml}`, supplied-xml.ts): every
 * code the document states — currencies, countries, units, VAT categories, payment means, allowance
 * and charge reasons, electronic-address schemes — must be in its list (BR-CL-*), as the CEN
 * schematron requires of the same elements. The lists are the service's own (code-lists.ts), the
 * ones the JSON model is checked against, so a code is accepted or refused alike on both doors.
 *
 * libxml2 does the reading and the test (readXml: one namespace-aware XPath expression for all
 * rules), so no code is picked out of the text by hand: for each rule the expression counts the
 * elements or attributes whose normalised value is not a whole entry of the list, and gives the first
 * of them. A rule whose elements the document does not have finds nothing (presence is the
 * schematron's BR-* rules' business, not a code list's).
 */
import type { ValidationIssue } from '../../shared/errors.js';
import {
  ALLOWANCE_REASONS,
  CHARGE_REASONS,
  COUNTRIES,
  CURRENCIES,
  ELECTRONIC_ADDRESS_SCHEMES,
  PAYMENT_MEANS,
  UNITS,
  VAT_CATEGORIES,
} from '../code-lists.js';
import type { Syntax } from './stated-totals.js';
import { readXml, XML_NS, xpathElement as el, xpathIndicatorIs as indicator } from '../xmllint/xml-schema-check.js';

const { ram: RAM, udt: UDT, cac: CAC, cbc: CBC } = XML_NS;

/** One code-list rule: the nodes it reads in each syntax (XPath, and the name a message shows), and its list. */
interface CodeRule {
  rule: string;
  list: ReadonlySet<string>;
  /** What the codes are, for the message: "unit codes (BT-130, BT-150)". */
  what: string;
  /** The list's name, for the message. */
  listName: string;
  places: Record<Syntax, { xpath: string; name: string }>;
}

const ram = (name: string) => `//${el(name, RAM)}`;
const cac = (name: string) => `//${el(name, CAC)}`;
const cbc = (name: string) => el(name, CBC);
const ciiReasons = (charge: boolean) =>
  `${ram('SpecifiedTradeAllowanceCharge')}[${indicator(`${el('ChargeIndicator', RAM)}/${el('Indicator', UDT)}`, charge)}]/${el('ReasonCode', RAM)}`;
const ublReasons = (charge: boolean) =>
  `${cac('AllowanceCharge')}[${indicator(cbc('ChargeIndicator'), charge)}]/${cbc('AllowanceChargeReasonCode')}`;

/** The rules, with the CEN schematron's contexts for each syntax (EN16931-CII-codes.sch, EN16931-UBL-codes.sch). */
const RULES: readonly CodeRule[] = [
  {
    rule: 'BR-CL-03',
    list: CURRENCIES,
    what: 'currencies of amounts',
    listName: 'ISO 4217',
    places: {
      cii: { xpath: `${ram('TaxTotalAmount')}/@currencyID`, name: 'ram:TaxTotalAmount/@currencyID' },
      ubl: { xpath: `//*[namespace-uri()='${CBC}']/@currencyID`, name: 'cbc:*Amount/@currencyID' },
    },
  },
  {
    rule: 'BR-CL-04',
    list: CURRENCIES,
    what: 'invoice currency (BT-5)',
    listName: 'ISO 4217',
    places: {
      cii: { xpath: ram('InvoiceCurrencyCode'), name: 'ram:InvoiceCurrencyCode' },
      ubl: { xpath: `/*/${cbc('DocumentCurrencyCode')}`, name: 'cbc:DocumentCurrencyCode' },
    },
  },
  {
    rule: 'BR-CL-05',
    list: CURRENCIES,
    what: 'VAT accounting currency (BT-6)',
    listName: 'ISO 4217',
    places: {
      cii: { xpath: ram('TaxCurrencyCode'), name: 'ram:TaxCurrencyCode' },
      ubl: { xpath: `/*/${cbc('TaxCurrencyCode')}`, name: 'cbc:TaxCurrencyCode' },
    },
  },
  {
    rule: 'BR-CL-14',
    list: COUNTRIES,
    what: 'country codes (BT-40, BT-55, BT-69, BT-80)',
    listName: 'ISO 3166-1 alpha-2',
    places: {
      cii: { xpath: ram('CountryID'), name: 'ram:CountryID' },
      ubl: { xpath: `${cac('Country')}/${cbc('IdentificationCode')}`, name: 'cac:Country/cbc:IdentificationCode' },
    },
  },
  {
    rule: 'BR-CL-15',
    list: COUNTRIES,
    what: 'item countries of origin (BT-159)',
    listName: 'ISO 3166-1 alpha-2',
    places: {
      cii: { xpath: `${ram('OriginTradeCountry')}/${el('ID', RAM)}`, name: 'ram:OriginTradeCountry/ram:ID' },
      ubl: {
        xpath: `${cac('OriginCountry')}/${cbc('IdentificationCode')}`,
        name: 'cac:OriginCountry/cbc:IdentificationCode',
      },
    },
  },
  {
    rule: 'BR-CL-16',
    list: PAYMENT_MEANS,
    what: 'payment means codes (BT-81)',
    listName: 'UNTDID 4461',
    places: {
      cii: {
        xpath: `${ram('SpecifiedTradeSettlementPaymentMeans')}/${el('TypeCode', RAM)}`,
        name: 'ram:SpecifiedTradeSettlementPaymentMeans/ram:TypeCode',
      },
      ubl: {
        xpath: `${cac('PaymentMeans')}/${cbc('PaymentMeansCode')}`,
        name: 'cac:PaymentMeans/cbc:PaymentMeansCode',
      },
    },
  },
  {
    rule: 'BR-CL-17',
    list: VAT_CATEGORIES,
    what: 'VAT category codes (BT-95, BT-102, BT-118)',
    listName: 'the EN 16931 subset of UNTDID 5305',
    places: {
      cii: {
        xpath: `${ram('CategoryTradeTax')}/${el('CategoryCode', RAM)}`,
        name: 'ram:CategoryTradeTax/ram:CategoryCode',
      },
      ubl: { xpath: `${cac('TaxCategory')}/${cbc('ID')}`, name: 'cac:TaxCategory/cbc:ID' },
    },
  },
  {
    rule: 'BR-CL-18',
    list: VAT_CATEGORIES,
    what: 'VAT category codes (BT-118, BT-151)',
    listName: 'the EN 16931 subset of UNTDID 5305',
    places: {
      cii: {
        xpath: `${ram('ApplicableTradeTax')}/${el('CategoryCode', RAM)}`,
        name: 'ram:ApplicableTradeTax/ram:CategoryCode',
      },
      ubl: { xpath: `${cac('ClassifiedTaxCategory')}/${cbc('ID')}`, name: 'cac:ClassifiedTaxCategory/cbc:ID' },
    },
  },
  {
    rule: 'BR-CL-19',
    list: ALLOWANCE_REASONS,
    what: 'allowance reason codes (BT-98, BT-140)',
    listName: 'UNTDID 5189',
    places: {
      cii: { xpath: ciiReasons(false), name: 'ram:SpecifiedTradeAllowanceCharge/ram:ReasonCode' },
      ubl: { xpath: ublReasons(false), name: 'cac:AllowanceCharge/cbc:AllowanceChargeReasonCode' },
    },
  },
  {
    rule: 'BR-CL-20',
    list: CHARGE_REASONS,
    what: 'charge reason codes (BT-105, BT-145)',
    listName: 'UNTDID 7161',
    places: {
      cii: { xpath: ciiReasons(true), name: 'ram:SpecifiedTradeAllowanceCharge/ram:ReasonCode' },
      ubl: { xpath: ublReasons(true), name: 'cac:AllowanceCharge/cbc:AllowanceChargeReasonCode' },
    },
  },
  {
    rule: 'BR-CL-23',
    list: UNITS,
    what: 'unit codes (BT-130, BT-150)',
    listName: 'UN/ECE Recommendations 20 and 21',
    places: {
      cii: {
        xpath: `(${ram('BilledQuantity')} | ${ram('BasisQuantity')})/@unitCode`,
        name: 'ram:BilledQuantity/@unitCode',
      },
      ubl: {
        xpath: `(//${cbc('InvoicedQuantity')} | //${cbc('CreditedQuantity')} | //${cbc('BaseQuantity')})/@unitCode`,
        name: 'cbc:InvoicedQuantity/@unitCode',
      },
    },
  },
  {
    rule: 'BR-CL-25',
    list: ELECTRONIC_ADDRESS_SCHEMES,
    what: 'electronic address schemes (BT-34, BT-49)',
    listName: 'EAS',
    places: {
      cii: { xpath: `${ram('URIUniversalCommunication')}/${el('URIID', RAM)}/@schemeID`, name: 'ram:URIID/@schemeID' },
      ubl: { xpath: `//${cbc('EndpointID')}/@schemeID`, name: 'cbc:EndpointID/@schemeID' },
    },
  },
];

/** The XPath test the schematron's code-list rules make: one code, no spaces, a whole entry of the list. */
function inList(list: ReadonlySet<string>): string {
  return `(not(contains(normalize-space(.), ' ')) and contains(' ${[...list].join(' ')} ', concat(' ', normalize-space(.), ' ')))`;
}

/**
 * For each rule in order, the count of codes outside its list and the first of them, joined by
 * newlines: one expression per syntax (~12 KB, the lists spelled out), built once.
 */
function findingsXpath(syntax: Syntax): string {
  const parts = RULES.flatMap(({ list, places }) => {
    const outside = `(${places[syntax].xpath})[not(${inList(list)})]`;
    return [`count(${outside})`, `normalize-space((${outside})[1])`];
  });
  return `concat(${parts.join(", '\n', ")})`;
}

const FINDINGS_XPATH: Record<Syntax, string> = { cii: findingsXpath('cii'), ubl: findingsXpath('ubl') };

/** What the XML states outside a rule's list: how many, and the first (as written, trimmed). */
export interface CodeFinding {
  rule: string;
  count: number;
  first: string;
}

/**
 * Reads the codes of a well-formed CII or UBL document and gives each rule with a code outside its
 * list (one libxml2 run, for `accountId`).
 */
export async function readCodeFindings(xml: string, syntax: Syntax, accountId: string): Promise<CodeFinding[]> {
  const { value } = await readXml(xml, FINDINGS_XPATH[syntax], accountId);
  if (value === null)
    throw new Error('readCodeFindings: the XML was not parsed (it is checked for well-formedness before)');
  const v = value.split('\n');
  return RULES.flatMap(({ rule }, i) => {
    const count = Number(v[2 * i]);
    return count > 0 ? [{ rule, count, first: v[2 * i + 1] ?? '' }] : [];
  });
}

/** One 422 item per rule broken, on `loc`, with the rule id as `type`. */
export function codeIssues(
  findings: CodeFinding[],
  syntax: Syntax,
  loc: readonly (string | number)[],
): ValidationIssue[] {
  return findings.map(({ rule, count, first }) => {
    const { what, listName, places } = RULES.find((r) => r.rule === rule)!;
    const which = count === 1 ? `"${first}" is` : `${count} are, the first "${first}",`;
    return {
      loc: [...loc],
      msg: `[${rule}] ${what[0]!.toUpperCase()}${what.slice(1)} at ${places[syntax].name}: ${which} not in ${listName}`,
      type: rule,
    };
  });
}
