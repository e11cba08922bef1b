/**
 * `POST /v1/einvoice/validate` (issue 41): an e-invoice someone received, judged by the official rules
 * the installed pack holds, as a report — for people who receive invoices, not only those who send them.
 *
 * In: the XML as a string (`xml`), or a file as base64 (`file_base64`) or behind a URL (`url`, fetched
 * through the outbound guard: public addresses only unless PRESSROOM_ALLOW_PRIVATE_NETWORKS, every
 * redirect checked again, a size cap and a deadline). A file that starts with `%PDF-` is a Factur-X /
 * ZUGFeRD PDF: its embedded invoice (factur-x.xml, or ZUGFeRD's and XRechnung's names) is read out by
 * qpdf, in a child process with its ceilings. Then the XML: no DOCTYPE (so no entity ever reaches a
 * parser), UTF-8, well-formed, CII or UBL (Invoice, CreditNote) by its root element, its specification
 * identifier naming the profile (XRechnung: KoSIT's rules too; Factur-X MINIMUM and BASIC WL: their
 * schema only; anything else CII or UBL: EN 16931), and the checks of official-checks.ts.
 *
 * What is wrong with the input (not an XML or a PDF, a DOCTYPE, not well-formed, neither CII nor UBL,
 * a PDF without an invoice) is a 422; an invoice the rules refuse is a 200 report with `valid: false`.
 *
 * Free, like a preview: it delivers no document and stores nothing, and whoever receives an invoice
 * should be able to check it before paying it, with or without credits. It runs as free work in every
 * pool it uses (qpdf, xmllint, the validation threads): after paid work, and never on every thread of
 * a pool, so an account looping it cannot slow a paying one; the account's rate limit counts it.
 */
import type { Dispatcher } from 'undici';
import { fetchPublicFile, PublicFetchError } from '../net/fetch-public-file.js';
import type { Qpdf } from '../pdf/qpdf.js';
import { AppError, ValidationError, type ValidationIssue } from '../shared/errors.js';
import {
  CONFORMANCE_LEVELS,
  EINVOICE_PROFILES,
  SUPPLIED_XML_MAX_CHARS,
  type EInvoiceProfile,
} from './invoice-schema.js';
import type { CheckResult, EInvoiceRules } from './rules/official-checks.js';
import { GUIDELINE_IDS } from './xml/cii-xml.js';
import { prologIssues, readAnyFacts, syntaxOfRoot } from './xml/supplied-xml.js';
import { decodedLength, isBase64 } from '../shared/base64.js';

/** What the caller sends: exactly one of the three. */
export interface ValidationInput {
  xml?: string | null;
  fileBase64?: string | null;
  url?: string | null;
}

/** The report. */
export interface ValidationReport {
  /** No check found a fatal finding. */
  valid: boolean;
  /** The rule sets that judged it (`EN16931 1.3.16 + XRechnung 3.0.2`), or `built-in` for MINIMUM / BASIC WL. */
  einvoiceChecks: string;
  source: {
    kind: 'xml' | 'pdf';
    /** The embedded file's name, for a PDF. */
    attachment?: string;
    syntax: 'CII' | 'UBL';
    /** The root element: CrossIndustryInvoice, Invoice or CreditNote. */
    document: string;
    /** BT-24 as the XML states it ('' when it states none). */
    specificationIdentifier: string;
    /** What it was judged as: `XRechnung`, a Factur-X level (`EN 16931`, `BASIC`, …), or `EN 16931` for another identifier. */
    profile: string;
  };
  checks: readonly CheckResult[];
}

export interface ValidatorDeps {
  rules: EInvoiceRules;
  qpdf: Qpdf;
  /** The guarded dispatcher URL downloads connect through. */
  dispatcher: Dispatcher;
  allowPrivateNetworks: boolean;
  /** Largest file (base64 or URL), bytes: PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES. */
  maxInputBytes: number;
  fetchTimeoutMs: number;
}

export interface EInvoiceValidator {
  validate(accountId: string, input: ValidationInput): Promise<ValidationReport>;
}

/** The names Factur-X 1.0 (= ZUGFeRD 2.1+), ZUGFeRD 2.0 and an XRechnung inside a ZUGFeRD PDF embed the invoice as, in that order. */
const EMBEDDED_NAMES = ['factur-x.xml', 'zugferd-invoice.xml', 'xrechnung.xml'] as const;
/** Where a PDF must start (readers look within the first 1024 bytes). */
const PDF_HEADER_WINDOW = 1024;
/** XRechnung's specification identifiers, CII and UBL alike (its extension's starts the same way). */
const XRECHNUNG_PREFIX = GUIDELINE_IDS.xrechnung;

const refuse = (loc: (string | number)[], msg: string, type: string): never => {
  throw new ValidationError([{ loc: ['body', ...loc], msg, type }]);
};

/** The input's bytes, or the XML itself; the field it came from for errors. */
async function readInput(
  input: ValidationInput,
  deps: ValidatorDeps,
): Promise<{ field: string; xml?: string; bytes?: Buffer }> {
  const given = (['xml', 'fileBase64', 'url'] as const).filter((k) => input[k] != null);
  if (given.length !== 1)
    refuse(
      [],
      `Send exactly one of xml (the XML as a string), file_base64 (an XML or PDF file in base64) and url (where to fetch one); this request has ${given.length === 0 ? 'none' : given.map((k) => (k === 'fileBase64' ? 'file_base64' : k)).join(' and ')}`,
      'value_error',
    );
  if (input.xml != null) return { field: 'xml', xml: input.xml };
  if (input.fileBase64 != null) {
    const compact = input.fileBase64.replace(/^data:[\w/+.-]+;base64,/i, '').replace(/\s+/g, '');
    if (!isBase64(compact)) refuse(['file_base64'], 'file_base64 is not valid base64', 'base64_invalid');
    if (decodedLength(compact) > deps.maxInputBytes)
      refuse(
        ['file_base64'],
        `The file may have ${deps.maxInputBytes} bytes at most (PRESSROOM_PDF_TOOLS_MAX_INPUT_BYTES)`,
        'file_too_large',
      );
    return { field: 'file_base64', bytes: Buffer.from(compact, 'base64') };
  }
  try {
    const file = await fetchPublicFile(input.url!, {
      dispatcher: deps.dispatcher,
      allowPrivateNetworks: deps.allowPrivateNetworks,
      maxBytes: deps.maxInputBytes,
      timeoutMs: deps.fetchTimeoutMs,
      accept: 'application/xml, text/xml, application/pdf',
    });
    return { field: 'url', bytes: file.body };
  } catch (error) {
    if (!(error instanceof PublicFetchError)) throw error;
    return refuse(
      ['url'],
      `url could not be downloaded: ${error.message}`,
      /larger than/.test(error.message) ? 'file_too_large' : 'url_fetch_failed',
    );
  }
}

/** The XML of a PDF: its embedded invoice, read by qpdf (free work). */
async function embeddedXml(
  pdf: Buffer,
  field: string,
  accountId: string,
  qpdf: Qpdf,
): Promise<{ xml: string; attachment: string }> {
  // 4 bytes per character at most: the XML's own bound in UTF-8.
  const found = await qpdf.embeddedFile(pdf, EMBEDDED_NAMES, {
    maxBytes: SUPPLIED_XML_MAX_CHARS * 4,
    accountId,
    kind: 'free',
  });
  switch (found.kind) {
    case 'file':
      return { xml: found.text, attachment: found.name };
    case 'none':
      return refuse(
        [field],
        `The PDF embeds no e-invoice (looked for ${EMBEDDED_NAMES.join(', ')}; it has ${found.names.length === 0 ? 'no embedded files' : found.names.join(', ')})`,
        'einvoice_not_found',
      );
    case 'encrypted':
      return refuse([field], 'The PDF is encrypted; a Factur-X / ZUGFeRD PDF (PDF/A-3) cannot be', 'pdf_encrypted');
    case 'unreadable':
      return refuse([field], `The file is not a readable PDF: ${found.reason}`, 'pdf_invalid');
    case 'too-large':
      return refuse(
        [field],
        `The embedded ${found.name} is larger than ${SUPPLIED_XML_MAX_CHARS * 4} bytes`,
        'xml_too_large',
      );
  }
}

/** The XML as text: UTF-8 (Factur-X and XRechnung require it), within the XML bound. */
function xmlText(bytes: Buffer, field: string): string {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return refuse([field], 'The file is neither a PDF (it does not start with %PDF-) nor UTF-8 XML', 'file_invalid');
  }
  return text;
}

/** What the specification identifier makes of the document: its profile's schema, and whether KoSIT's rules apply. */
function judgedAs(
  syntax: 'cii' | 'ubl',
  guideline: string,
): { profile: EInvoiceProfile; xrechnung: boolean; name: string } {
  if (guideline.startsWith(XRECHNUNG_PREFIX)) return { profile: 'en16931', xrechnung: true, name: 'XRechnung' };
  const facturX = syntax === 'cii' ? EINVOICE_PROFILES.find((p) => GUIDELINE_IDS[p] === guideline) : undefined;
  if (facturX) return { profile: facturX, xrechnung: false, name: CONFORMANCE_LEVELS[facturX] };
  return { profile: 'en16931', xrechnung: false, name: CONFORMANCE_LEVELS.en16931 };
}

export function createEInvoiceValidator(deps: ValidatorDeps): EInvoiceValidator {
  return {
    async validate(accountId, input) {
      const pack = await deps.rules.activePack();
      if (!pack) {
        throw new AppError(
          'EINVOICE_RULES_MISSING',
          deps.rules.mode === 'off'
            ? 'POST /v1/einvoice/validate judges by the official rules, which this service does not use (PRESSROOM_EINVOICE_RULES=off).'
            : 'POST /v1/einvoice/validate judges by the official rules, and none are installed; the operator installs them with `pressroom einvoice rules install`.',
        );
      }
      const read = await readInput(input, deps);
      let xml = read.xml;
      let attachment: string | undefined;
      if (read.bytes) {
        if (read.bytes.subarray(0, PDF_HEADER_WINDOW).includes('%PDF-'))
          ({ xml, attachment } = await embeddedXml(read.bytes, read.field, accountId, deps.qpdf));
        else xml = xmlText(read.bytes, read.field);
      }
      const loc = [read.field];
      if (xml!.length > SUPPLIED_XML_MAX_CHARS)
        refuse(
          loc,
          `The XML has ${xml!.length} characters; at most ${SUPPLIED_XML_MAX_CHARS} are checked`,
          'xml_too_large',
        );
      const prolog = prologIssues(xml!, ['body', ...loc]).map(
        (i): ValidationIssue =>
          i.type === 'xml_encoding'
            ? { ...i, msg: 'The XML declares an encoding other than UTF-8; Factur-X and XRechnung require UTF-8' }
            : i,
      );
      if (prolog.length > 0) throw new ValidationError(prolog);
      const facts = await readAnyFacts(xml!, accountId);
      if ('findings' in facts)
        throw new ValidationError(
          facts.findings.map((f) => ({
            loc: ['body', ...loc],
            msg: `The XML is not well-formed${f.line ? ` (line ${f.line})` : ''}: ${f.message}`,
            type: 'xml_syntax',
            ...(f.line ? { ctx: { line: f.line } } : {}),
          })),
        );
      const syntax = syntaxOfRoot(facts);
      if (!syntax)
        refuse(
          loc,
          `The XML's root is {${facts.namespace}}${facts.name}: neither a UN/CEFACT CII invoice (rsm:CrossIndustryInvoice) nor an OASIS UBL 2.1 Invoice or CreditNote`,
          'einvoice_syntax',
        );
      const as = judgedAs(syntax!, facts.guideline);
      const report = await deps.rules.judge(
        pack,
        xml!,
        {
          syntax: syntax!,
          profile: as.profile,
          ublDocument: facts.name === 'CreditNote' ? 'CreditNote' : 'Invoice',
          xrechnung: as.xrechnung,
          schema: true,
        },
        { accountId, kind: 'free' },
      );
      return {
        valid: report.checks.every((c) => c.status !== 'failed'),
        einvoiceChecks: report.label,
        source: {
          kind: attachment ? 'pdf' : 'xml',
          ...(attachment ? { attachment } : {}),
          syntax: syntax === 'cii' ? 'CII' : 'UBL',
          document: facts.name,
          specificationIdentifier: facts.guideline,
          profile: as.name,
        },
        checks: report.checks,
      };
    },
  };
}
