/**
 * A customer's own e-invoice XML (`einvoice: {format, xml}`, issue 16): checked before anything is
 * charged, then embedded (Factur-X / ZUGFeRD) or answered (XRechnung) exactly as it came. The order,
 * each step only when the one before passed (a later one means nothing on a document that failed it):
 *   1. the prolog: no DOCTYPE (so no entity, internal or external, ever reaches a parser), and UTF-8;
 *   2. libxml2 parses it (well-formed) and reads the root element and the specification identifier
 *      (BT-24) with one namespace-aware XPath expression (xml-schema-check.ts readXml);
 *   3. the root element and its namespace are the format's syntax (CII, or UBL Invoice / CreditNote);
 *   4. the specification identifier names a profile the format offers, and the one the caller gave;
 *   5. CII only: the profile's XSD (checkCiiSchema). No npm package ships the UBL 2.1 schema.
 *   6. the codes it states against the EN 16931 code lists (BR-CL-*, stated-codes.ts) and the totals it
 *      states against the parts it states (BR-CO-10…17, stated-totals.ts), both reported together.
 * Every failure is a 422 item on `body.einvoice.xml`. The other EN 16931 business rules are schematron
 * assertions over the XML: with the official rules pack installed einvoice.ts has them checked after these
 * steps (../rules/official-checks.ts); without it the caller answers for the rest of the content.
 */
import { ValidationError, type ValidationIssue } from '../../shared/errors.js';
import { GUIDELINE_IDS } from './cii-xml.js';
import { CONFORMANCE_LEVELS, EINVOICE_PROFILES, type EInvoiceFormat, type EInvoiceProfile } from '../invoice-schema.js';
import { codeIssues, readCodeFindings } from './stated-codes.js';
import { readStatedTotals, statedTotalsIssues, type Syntax } from './stated-totals.js';
import {
  checkCiiSchema,
  readXml,
  XML_NS,
  xpathElement as element,
  type SchemaFinding,
} from '../xmllint/xml-schema-check.js';

/** What `einvoice.xml` comes with. */
export interface SuppliedXml {
  format: EInvoiceFormat;
  /** The profile the caller named (Factur-X / ZUGFeRD), if any: it must be the XML's. */
  profile?: EInvoiceProfile;
  xml: string;
}

const LOC = ['body', 'einvoice', 'xml'];
/** Schema findings beyond this many are counted, not listed: a large broken file would give thousands. */
const MAX_SCHEMA_FINDINGS = 20;

const { rsm: CII_NS, ram: RAM_NS, cbc: CBC_NS } = XML_NS;

const ROOTS: Record<Syntax, { name: string; namespace: string }[]> = {
  cii: [{ name: 'CrossIndustryInvoice', namespace: CII_NS }],
  ubl: [
    { name: 'Invoice', namespace: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2' },
    { name: 'CreditNote', namespace: 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2' },
  ],
};
const SYNTAX_NAMES: Record<Syntax, string> = {
  cii: 'UN/CEFACT CII D16B (rsm:CrossIndustryInvoice)',
  ubl: 'OASIS UBL 2.1 (Invoice or CreditNote)',
};

/** Where each syntax keeps the specification identifier (BT-24), and how the docs name that place. */
const GUIDELINE: Record<Syntax, { xpath: string; path: string }> = {
  cii: {
    xpath: `/*/${element('ExchangedDocumentContext', CII_NS)}/${element('GuidelineSpecifiedDocumentContextParameter', RAM_NS)}/${element('ID', RAM_NS)}`,
    path: 'rsm:ExchangedDocumentContext/ram:GuidelineSpecifiedDocumentContextParameter/ram:ID',
  },
  ubl: { xpath: `/*/${element('CustomizationID', CBC_NS)}`, path: 'cbc:CustomizationID' },
};

const syntaxOf = (format: EInvoiceFormat): Syntax => (format === 'xrechnung-ubl' ? 'ubl' : 'cii');
const issue = (type: string, msg: string, line?: number | null): ValidationIssue => ({
  loc: [...LOC],
  msg,
  type,
  ...(line ? { ctx: { line } } : {}),
});

/**
 * The prolog, read before any parser sees the text. A DOCTYPE is refused outright: it is the only place
 * entities are declared (XXE, entity expansion), and an invoice never needs one. In a well-formed
 * document a DOCTYPE can stand only here, before the root element, so reading the prolog is enough;
 * whatever else is odd is left to libxml2, which refuses a document that is not well-formed. (libxml2
 * as run here would not fetch an external entity anyway: no --noent or --loaddtd, no network, no files.)
 * The encoding: the JSON string is handed on as UTF-8, which Factur-X and XRechnung require, so a
 * declaration of another encoding would make the embedded file lie about its bytes.
 */
export function prologIssues(xml: string, loc: readonly (string | number)[] = LOC): ValidationIssue[] {
  const issue = (type: string, msg: string, line?: number | null): ValidationIssue => ({
    loc: [...loc],
    msg,
    type,
    ...(line ? { ctx: { line } } : {}),
  });
  let rest = xml.startsWith('\uFEFF') ? xml.slice(1) : xml;
  const declaration = /^<\?xml\s[^?]*\?>/.exec(rest);
  if (declaration) {
    const encoding = /\bencoding\s*=\s*(["'])([^"']*)\1/.exec(declaration[0])?.[2];
    if (encoding !== undefined && encoding.toLowerCase() !== 'utf-8') {
      return [
        issue(
          'xml_encoding',
          `The XML declares encoding="${encoding}"; einvoice.xml is a JSON string and is delivered as UTF-8, which Factur-X and XRechnung require: declare encoding="UTF-8" or leave the encoding out`,
          1,
        ),
      ];
    }
    rest = rest.slice(declaration[0].length);
  }
  for (;;) {
    rest = rest.trimStart();
    const close = rest.startsWith('<!--') ? '-->' : rest.startsWith('<?') ? '?>' : null;
    const end = close === null ? -1 : rest.indexOf(close, 2);
    if (close === null || end < 0) break;
    rest = rest.slice(end + close.length);
  }
  if (/^<!DOCTYPE/i.test(rest)) {
    return [
      issue(
        'xml_doctype',
        'The XML has a DOCTYPE declaration, which the service refuses (it is where entities are declared, and an e-invoice needs none): remove the <!DOCTYPE …> and any entity references',
      ),
    ];
  }
  return [];
}

/**
 * What POST /v1/einvoice/validate reads first, whatever the syntax: the root element and the
 * specification identifier (CII's or UBL's place, whichever the document has), or, when libxml2 does
 * not parse it, its findings. Free work for `accountId`.
 */
export async function readAnyFacts(
  xml: string,
  accountId: string,
): Promise<{ namespace: string; name: string; guideline: string } | { findings: SchemaFinding[] }> {
  const { findings, value } = await readXml(
    xml,
    `concat(namespace-uri(/*), '\n', local-name(/*), '\n', string(${GUIDELINE.cii.xpath}), string(${GUIDELINE.ubl.xpath}))`,
    accountId,
    'free',
  );
  if (value === null) return { findings };
  const [namespace = '', name = '', ...guideline] = value.split('\n');
  return { namespace, name, guideline: guideline.join('\n') };
}

/** The syntax of a root element, if it is CII's or UBL's Invoice or CreditNote. */
export function syntaxOfRoot(root: XmlRoot): Syntax | null {
  return (
    (Object.keys(ROOTS) as Syntax[]).find((s) =>
      ROOTS[s].some((r) => r.name === root.name && r.namespace === root.namespace),
    ) ?? null
  );
}

/** The root element and the specification identifier, as libxml2 reads them; or why it cannot. */
async function readFacts(
  xml: string,
  syntax: Syntax,
  accountId: string,
): Promise<{ namespace: string; name: string; guideline: string } | ValidationIssue[]> {
  // Newlines separate the parts: a namespace URI or an element name cannot hold one, so only the
  // identifier, last, could, and it keeps whatever follows the second separator.
  const { findings, value } = await readXml(
    xml,
    `concat(namespace-uri(/*), '\n', local-name(/*), '\n', string(${GUIDELINE[syntax].xpath}))`,
    accountId,
  );
  if (value === null)
    return findings.map((f) =>
      issue('xml_syntax', `The XML is not well-formed${f.line ? ` (line ${f.line})` : ''}: ${f.message}`, f.line),
    );
  const [namespace = '', name = '', ...guideline] = value.split('\n');
  return { namespace, name, guideline: guideline.join('\n') };
}

/** The root fits the format's syntax; a hint when it is the other syntax's. */
function rootIssues(format: EInvoiceFormat, root: { namespace: string; name: string }): ValidationIssue[] {
  const syntax = syntaxOf(format);
  const fits = (s: Syntax) => ROOTS[s].some((r) => r.name === root.name && r.namespace === root.namespace);
  if (fits(syntax)) return [];
  const found = `{${root.namespace}}${root.name}`;
  const hint =
    syntax === 'ubl' && fits('cii')
      ? ' (this is CII: send it as format xrechnung-cii, factur-x or zugferd)'
      : syntax === 'cii' && fits('ubl')
        ? ' (this is UBL: send it as format xrechnung-ubl)'
        : '';
  const expected = ROOTS[syntax].map((r) => `{${r.namespace}}${r.name}`).join(' or ');
  return [
    issue(
      'einvoice_syntax',
      `format ${format} takes ${SYNTAX_NAMES[syntax]} XML, whose root element is ${expected}; this XML's root is ${found}${hint}`,
    ),
  ];
}

/** The profile the specification identifier names, checked against the format and the caller's profile. */
function profileOf(request: SuppliedXml, guideline: string): EInvoiceProfile | ValidationIssue[] {
  const syntax = syntaxOf(request.format);
  const where = `the specification identifier (BT-24, ${GUIDELINE[syntax].path})`;
  const found = guideline === '' ? `this XML has no ${GUIDELINE[syntax].path}` : `this XML's is "${guideline}"`;
  if (request.format === 'xrechnung-cii' || request.format === 'xrechnung-ubl') {
    if (guideline === GUIDELINE_IDS.xrechnung) return 'en16931';
    // Factur-X is CII: the hint fits only a CII document.
    const facturX = syntax === 'cii' ? EINVOICE_PROFILES.find((p) => GUIDELINE_IDS[p] === guideline) : undefined;
    const hint = facturX ? ` (it is Factur-X ${CONFORMANCE_LEVELS[facturX]}: send it as format factur-x)` : '';
    return [issue('einvoice_profile', `XRechnung 3.0 requires ${where} "${GUIDELINE_IDS.xrechnung}"; ${found}${hint}`)];
  }
  const profile = EINVOICE_PROFILES.find((p) => GUIDELINE_IDS[p] === guideline);
  if (!profile) {
    const known = EINVOICE_PROFILES.map((p) => `"${GUIDELINE_IDS[p]}" (${CONFORMANCE_LEVELS[p]})`).join(', ');
    const hint = guideline === GUIDELINE_IDS.xrechnung ? ' (it is XRechnung: send it as format xrechnung-cii)' : '';
    return [
      issue(
        'einvoice_profile',
        `${request.format} needs ${where} of a Factur-X 1.0 profile: ${known}; ${found}${hint}`,
      ),
    ];
  }
  if (request.profile !== undefined && request.profile !== profile) {
    return [
      issue(
        'einvoice_profile',
        `einvoice.profile is ${request.profile}, but the XML is Factur-X ${CONFORMANCE_LEVELS[profile]} ("${guideline}"); leave profile out (it is read from the XML) or make the two agree`,
      ),
    ];
  }
  return profile;
}

function schemaIssues(findings: SchemaFinding[], schemaName: string): ValidationIssue[] {
  const listed = findings
    .slice(0, MAX_SCHEMA_FINDINGS)
    .map((f) =>
      issue(
        'xml_schema',
        `The XML does not match the ${schemaName} schema${f.line ? ` (line ${f.line})` : ''}: ${f.message}`,
        f.line,
      ),
    );
  const more = findings.length - listed.length;
  return more > 0 ? [...listed, issue('xml_schema', `… and ${more} more schema findings`)] : listed;
}

/** The root element of an XML: its namespace and local name. */
export interface XmlRoot {
  namespace: string;
  name: string;
}

/**
 * Checks a customer's XML and answers the profile it is in ('en16931' for XRechnung, its content
 * level); throws a ValidationError with every finding of the first step that fails. `checkSchema`
 * adds the XSD pass, the codes and the totals: before the charge, not again when the paid work runs on
 * the same text. The checks run for `accountId` (xml-schema-check.ts).
 */
export async function checkSuppliedXml(
  request: SuppliedXml,
  { checkSchema, accountId }: { checkSchema: boolean; accountId: string },
): Promise<{ profile: EInvoiceProfile; root: XmlRoot }> {
  const prolog = prologIssues(request.xml);
  if (prolog.length > 0) throw new ValidationError(prolog);
  const facts = await readFacts(request.xml, syntaxOf(request.format), accountId);
  if (Array.isArray(facts)) throw new ValidationError(facts);
  const root = rootIssues(request.format, facts);
  if (root.length > 0) throw new ValidationError(root);
  const profile = profileOf(request, facts.guideline);
  if (Array.isArray(profile)) throw new ValidationError(profile);
  if (checkSchema && syntaxOf(request.format) === 'cii') {
    const findings = await checkCiiSchema(request.xml, profile, accountId);
    const schemaName = request.format === 'xrechnung-cii' ? 'EN 16931 CII' : `Factur-X ${CONFORMANCE_LEVELS[profile]}`;
    if (findings.length > 0) throw new ValidationError(schemaIssues(findings, schemaName));
  }
  if (checkSchema) {
    const syntax = syntaxOf(request.format);
    const [codes, totals] = await Promise.all([
      readCodeFindings(request.xml, syntax, accountId),
      readStatedTotals(request.xml, syntax, accountId),
    ]);
    const content = [...codeIssues(codes, syntax, LOC), ...statedTotalsIssues(totals, syntax, profile, LOC)];
    if (content.length > 0) throw new ValidationError(content);
  }
  return { profile, root: { namespace: facts.namespace, name: facts.name } };
}
