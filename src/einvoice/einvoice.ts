/**
 * E-invoices (issue 16): one EN 16931 invoice as JSON → the XML of the requested syntax, checked
 * before anything is charged. The order, per request:
 *   request shape (TypeBox, in the route) → exactly one of invoice and xml → format/profile/PDF variant
 *   fit → EN 16931 + XRechnung business rules and code lists on the JSON (business-rules.ts) → totals
 *   (totals.ts) → XML (cii-xml.ts / ubl-xml.ts) → the XML against the syntax's schema (xml-schema-check.ts).
 * Or, with `einvoice.xml`, the customer's own XML: form, syntax, profile and schema (supplied-xml.ts).
 * Then, with the official rules pack installed (rules/, issue 41), the XML is judged by the official
 * rules: UBL against the OASIS UBL 2.1 XSD, then the CEN EN 16931 schematron, and for XRechnung KoSIT's
 * (Factur-X MINIMUM and BASIC WL: their schema only); a fatal finding refuses the invoice, a warning
 * travels with the delivered document, and `einvoice_checks` names the rule sets that judged it.
 * Every failure is a ValidationError (422) with one detail item per failed rule, raised from
 * `checkEInvoice`, which documents.prepare calls before the credit is reserved. `buildEInvoice` makes
 * the same XML again when the paid work runs (the XML is a pure function of the request).
 * Factur-X / ZUGFeRD carry the XML inside a PDF/A-3b (facturx-attachment.ts); XRechnung is the XML alone.
 */
import { ValidationError, type ValidationIssue } from '../shared/errors.js';
import type { DocumentWarning } from '../shared/document-warnings.js';
import { checkBusinessRules } from './business-rules.js';
import { BUILT_IN, judgedByRules, type EInvoiceRules, type RuleFinding } from './rules/official-checks.js';
import type { ActivePack } from './rules/pack-store.js';
import { isUblCreditNote } from './xml/ubl-xml.js';
import { buildCiiXml } from './xml/cii-xml.js';
import type { EInvoiceFormat, EInvoiceProfile, EInvoiceRequest, Invoice } from './invoice-schema.js';
import { checkSuppliedXml } from './xml/supplied-xml.js';
import { formatAmount } from './decimals.js';
import { computeTotals, type InvoiceTotals } from './totals.js';
import { buildUblXml } from './xml/ubl-xml.js';
import { checkCiiSchema, checkWellFormed } from './xmllint/xml-schema-check.js';

export { EInvoiceRequestSchema, InvoiceSchema, type EInvoiceRequest, type Invoice } from './invoice-schema.js';

/** An e-invoice made from a request. */
export interface BuiltEInvoice {
  format: EInvoiceFormat;
  /** The Factur-X profile (read from the XML when the customer sent one); 'en16931' for XRechnung (its content level). */
  profile: EInvoiceProfile;
  xml: string;
  /** The amounts computed from the invoice; null for the customer's own XML (there is no invoice to compute from). */
  totals: InvoiceTotals | null;
}

/** True for the formats delivered inside a PDF (Factur-X, ZUGFeRD); XRechnung is XML only. */
export function isHybridFormat(format: EInvoiceFormat): boolean {
  return format === 'factur-x' || format === 'zugferd';
}

const LOC = ['body', 'einvoice'] as const;

/** What the e-invoice is made from: exactly one of the invoice as JSON and the customer's XML. */
function sourceOf(request: EInvoiceRequest): { invoice: Invoice } | { xml: string } {
  if (request.invoice !== undefined && request.xml === undefined) return { invoice: request.invoice };
  if (request.xml !== undefined && request.invoice === undefined) return { xml: request.xml };
  const which = request.invoice === undefined ? 'neither' : 'both';
  throw new ValidationError([
    {
      loc: [...LOC],
      msg: `einvoice needs exactly one of invoice (the invoice as JSON; the service builds the XML) and xml (your own CII or UBL XML, as a string); this request has ${which}`,
      type: 'value_error',
    },
  ]);
}

/** What the request asks that the format cannot do: a profile for XRechnung, a PDF/A without attachments. */
function checkFit(request: EInvoiceRequest, pdfVariant: string | null | undefined): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  if (!isHybridFormat(request.format) && request.profile !== undefined) {
    issues.push({
      loc: [...LOC, 'profile'],
      msg: `${request.format} has no profiles (it is EN 16931 content with XRechnung's rules); leave profile out`,
      type: 'value_error',
    });
  }
  if (isHybridFormat(request.format) && pdfVariant && pdfVariant !== 'pdf/a-3b') {
    issues.push({
      loc: ['body', 'pdf_variant'],
      msg: `${request.format} embeds the XML in the PDF, which only PDF/A-3 allows (${pdfVariant} forbids attachments); use pdf/a-3b or leave pdf_variant out`,
      type: 'value_error',
    });
  }
  return issues;
}

/** Builds the XML from the invoice; throws a ValidationError with the misfits and every rule the invoice breaks. */
function buildFromInvoice(request: EInvoiceRequest, invoice: Invoice, misfits: ValidationIssue[]): BuiltEInvoice {
  const issues = [...misfits, ...checkBusinessRules(invoice, request.format)];
  if (issues.length > 0) throw new ValidationError(issues);
  const totals = computeTotals(invoice);
  const profile = request.profile ?? 'en16931';
  const xml =
    request.format === 'xrechnung-ubl'
      ? buildUblXml({ invoice, totals })
      : buildCiiXml({ invoice, totals, profile: request.format === 'xrechnung-cii' ? 'xrechnung' : profile });
  return { format: request.format, profile: isHybridFormat(request.format) ? profile : 'en16931', xml, totals };
}

/** The built XML against its schema; the rules passed, so a finding is something the model let through. */
async function checkBuiltSchema(built: BuiltEInvoice, accountId: string): Promise<void> {
  const findings =
    built.format === 'xrechnung-ubl'
      ? await checkWellFormed(built.xml, accountId)
      : await checkCiiSchema(built.xml, built.profile, accountId);
  if (findings.length === 0) return;
  // Report each schema message (with its XML line) rather than sending an invalid invoice.
  throw new ValidationError(
    findings.map((f) => ({
      loc: [...LOC, 'invoice'],
      msg: `The ${built.format} XML does not match its schema${f.line ? ` (line ${f.line})` : ''}: ${f.message}`,
      type: 'xml_schema',
    })),
  );
}

/**
 * Whose request it is (its XML checks run on the process's xmllint and validation threads, shared
 * fairly between accounts), the PDF variant it asks for, if any, and the official rules, if the
 * service has them (rules/official-checks.ts; absent: the built-in checks only).
 */
export interface EInvoiceContext {
  accountId: string;
  pdfVariant?: string | null;
  rules?: EInvoiceRules;
}

/** What the checks concluded beyond a pass: which rule sets judged the XML, and what they warned of. */
export interface EInvoiceVerdict {
  /** `built-in`, or the official rule sets: `EN16931 1.3.16`, `EN16931 1.3.16 + XRechnung 3.0.2`. */
  checks: string;
  warnings: DocumentWarning[];
}

/** A verdict as a job row keeps it (JSON, or null without an e-invoice), read back. */
export function storedVerdict(json: string | null): EInvoiceVerdict | null {
  return json ? (JSON.parse(json) as EInvoiceVerdict) : null;
}

/** An e-invoice that passed every check before the charge, with the verdict. */
export interface CheckedEInvoice extends BuiltEInvoice {
  verdict: EInvoiceVerdict;
}

/** Places of a rule listed in a 422 item's ctx at most. */
const MAX_RULE_PLACES = 10;

type Placed = RuleFinding & { check: string };

/** Findings grouped by rule, in the order their rules first appear. */
function byRule(findings: Placed[]): Placed[][] {
  const groups = new Map<string, Placed[]>();
  for (const f of findings) groups.set(f.rule, [...(groups.get(f.rule) ?? []), f]);
  return [...groups.values()];
}

/** A fatal finding as a 422 item: one per rule (schema findings one each), `loc` into what the caller sent. */
function ruleIssues(findings: Placed[], source: 'invoice' | 'xml'): ValidationIssue[] {
  const schema = findings
    .filter((f) => f.rule === 'xml_schema')
    .map(
      (f): ValidationIssue => ({
        loc: [...LOC, source],
        msg: `The XML does not match the ${f.check}${f.line ? ` (line ${f.line})` : ''}: ${f.message}`,
        type: 'xml_schema',
        ...(f.line ? { ctx: { line: f.line } } : {}),
      }),
    );
  const rules = byRule(findings.filter((f) => f.rule !== 'xml_schema')).map(([first, ...rest]): ValidationIssue => {
    const places = [first!, ...rest].map((f) => f.location).filter(Boolean);
    const where =
      source === 'xml'
        ? ''
        : ` (in the ${first!.check.startsWith('XRechnung') ? 'XRechnung' : 'EN 16931'} XML built from einvoice.invoice${places[0] ? `, at ${places[0]}` : ''})`;
    return {
      // Built XML: the invoice as a whole (the XPath is in msg and ctx); the caller's XML: the place in it.
      loc: source === 'xml' && places[0] ? [...LOC, 'xml', places[0]] : [...LOC, source],
      msg: `[${first!.rule}] ${first!.message}${where}${rest.length > 0 ? ` (${rest.length + 1} places)` : ''}`,
      type: first!.rule,
      ctx: { check: first!.check, locations: places.slice(0, MAX_RULE_PLACES) },
    };
  });
  return [...schema, ...rules];
}

/** A warning of the official rules, as a document warning (one per rule). */
function ruleWarnings(findings: Placed[]): DocumentWarning[] {
  return byRule(findings).map(([first, ...rest]) => ({
    code: 'EINVOICE_RULE_WARNING',
    message: `[${first!.rule}] ${first!.message} (${first!.check}${first!.location ? `, at ${first!.location}` : ''}${rest.length > 0 ? `, ${rest.length + 1} places` : ''})`,
  }));
}

/**
 * The XML judged by the official rules (after the built-in checks passed): a fatal finding refuses it
 * (422, one item per rule), warnings and the rule sets that judged it make the verdict.
 */
async function judgeOfficially(
  rules: EInvoiceRules,
  pack: ActivePack,
  built: BuiltEInvoice,
  source: 'invoice' | 'xml',
  accountId: string,
  ublCreditNote: boolean,
): Promise<EInvoiceVerdict> {
  const syntax = built.format === 'xrechnung-ubl' ? 'ubl' : 'cii';
  // CII's schema was checked by the built-in step; MINIMUM and BASIC WL have no rules beyond it.
  if (syntax === 'cii' && !judgedByRules(built.profile)) return { checks: BUILT_IN, warnings: [] };
  const report = await rules.judge(
    pack,
    built.xml,
    {
      syntax,
      profile: built.profile,
      ublDocument: ublCreditNote ? 'CreditNote' : 'Invoice',
      xrechnung: built.format === 'xrechnung-cii' || built.format === 'xrechnung-ubl',
      schema: syntax === 'ubl',
    },
    { accountId, kind: 'paid' },
  );
  const placed = report.checks.flatMap((c) => c.findings.map((f): Placed => ({ ...f, check: c.check })));
  const fatal = placed.filter((f) => f.severity === 'fatal');
  if (fatal.length > 0) throw new ValidationError(ruleIssues(fatal, source));
  return { checks: report.label, warnings: ruleWarnings(placed.filter((f) => f.severity === 'warning')) };
}

/** The e-invoice of a request; `judge` adds the schema pass and the official rules (before the charge, not again on the same request). */
async function makeEInvoice(
  request: EInvoiceRequest,
  context: EInvoiceContext,
  judge: boolean,
): Promise<CheckedEInvoice> {
  const { accountId, pdfVariant } = context;
  // A required pack that is missing refuses the request first: nothing else is worth checking then.
  const pack = judge && context.rules ? await context.rules.activePack() : null;
  const source = sourceOf(request);
  const misfits = checkFit(request, pdfVariant);
  let built: BuiltEInvoice;
  let ublCreditNote: boolean;
  if ('xml' in source) {
    if (misfits.length > 0) throw new ValidationError(misfits);
    const { profile, root } = await checkSuppliedXml(
      { format: request.format, profile: request.profile, xml: source.xml },
      { checkSchema: judge, accountId },
    );
    built = { format: request.format, profile, xml: source.xml, totals: null };
    ublCreditNote = root.name === 'CreditNote';
  } else {
    built = buildFromInvoice(request, source.invoice, misfits);
    ublCreditNote = isUblCreditNote(source.invoice.type_code);
    // With the pack, UBL gets its XSD in the official checks (a parse too); without, its parse here.
    if (judge && !(pack && built.format === 'xrechnung-ubl')) await checkBuiltSchema(built, accountId);
  }
  const verdict = !(judge && pack && context.rules)
    ? { checks: BUILT_IN, warnings: [] }
    : await judgeOfficially(context.rules, pack, built, 'xml' in source ? 'xml' : 'invoice', accountId, ublCreditNote);
  return { ...built, verdict };
}

/** Everything checkable before a charge: the rules, the XML against its schema, the official rules. Throws a ValidationError (or 503 for a required pack). */
export function checkEInvoice(request: EInvoiceRequest, context: EInvoiceContext): Promise<CheckedEInvoice> {
  return makeEInvoice(request, context, true);
}

/** The same e-invoice again when the paid work runs (checkEInvoice passed on this request): no schema pass, no rules. */
export async function buildEInvoice(request: EInvoiceRequest, context: EInvoiceContext): Promise<BuiltEInvoice> {
  return makeEInvoice(request, context, false);
}

/**
 * What the visual template sees as `einvoice`: the request plus every computed amount as text; for the
 * customer's own XML only what is known without reading its content: `{format, profile, xml: true}`.
 */
export function templateView(request: EInvoiceRequest, built: BuiltEInvoice): Record<string, unknown> {
  const t = built.totals;
  if (!t) return { format: built.format, profile: built.profile, xml: true };
  return {
    format: request.format,
    profile: built.profile,
    invoice: request.invoice,
    totals: {
      line_total: formatAmount(t.lineTotal),
      allowance_total: formatAmount(t.allowanceTotal),
      charge_total: formatAmount(t.chargeTotal),
      tax_exclusive: formatAmount(t.taxExclusive),
      tax_total: formatAmount(t.taxTotal),
      tax_inclusive: formatAmount(t.taxInclusive),
      prepaid: formatAmount(t.prepaid),
      amount_due: formatAmount(t.amountDue),
      lines: t.lineNet.map((net) => formatAmount(net)),
      // The rate stays a number for templates, as before: at most 5 significant digits, which a double holds exactly.
      vat: t.vat.map((g) => ({
        category: g.category,
        rate: g.rate === undefined ? null : g.rate.toNumber(),
        taxable: formatAmount(g.taxable),
        tax: formatAmount(g.tax),
      })),
    },
  };
}
