/**
 * E-invoices in the studio (issue 16; the API is docs/einvoice.md): the formats and profiles a run can
 * attach, a complete example invoice, and the 422 findings of a refused invoice, grouped by rule.
 * Pure, no DOM.
 */
import type { ValidationIssue } from '../api-types.js';
// The service's own names (types only: nothing of the server's schema code reaches the bundle).
import type { EInvoiceFormat, EInvoiceProfile } from '../../../../src/einvoice/invoice-schema.js';

export type { EInvoiceFormat, EInvoiceProfile };

/** What `einvoice` in a create or create-async body holds (`profile` only for Factur-X / ZUGFeRD). */
export interface EInvoiceRequest {
  format: EInvoiceFormat;
  profile?: EInvoiceProfile;
  invoice: Record<string, unknown>;
}

/** The formats, as docs/einvoice.md lists them, with what each delivers (a Record, so a format the service adds is a type error here). */
const FORMATS: Record<EInvoiceFormat, { label: string; output: string }> = {
  'factur-x': { label: 'Factur-X', output: 'a PDF/A-3b with the CII XML embedded as factur-x.xml' },
  zugferd: {
    label: 'ZUGFeRD',
    output: 'a PDF/A-3b with the CII XML embedded as factur-x.xml (ZUGFeRD 2.x is Factur-X 1.0)',
  },
  'xrechnung-cii': { label: 'XRechnung (CII)', output: 'the XRechnung 3.0 XML alone (UN/CEFACT CII), no PDF' },
  'xrechnung-ubl': { label: 'XRechnung (UBL)', output: 'the XRechnung 3.0 XML alone (OASIS UBL 2.1), no PDF' },
};
export const EINVOICE_FORMATS = (Object.keys(FORMATS) as EInvoiceFormat[]).map((id) => ({ id, ...FORMATS[id] }));

/** The Factur-X / ZUGFeRD profiles, from the smallest; the API's default is EN 16931. */
const PROFILES: Record<EInvoiceProfile, string> = {
  minimum: 'MINIMUM',
  'basic-wl': 'BASIC WL',
  basic: 'BASIC',
  en16931: 'EN 16931',
  extended: 'EXTENDED',
};
export const EINVOICE_PROFILES = (Object.keys(PROFILES) as EInvoiceProfile[]).map((id) => ({
  id,
  label: PROFILES[id],
}));

export const DEFAULT_PROFILE: EInvoiceProfile = 'en16931';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** True for the formats delivered inside a PDF; XRechnung answers the XML alone (application/xml). */
export const isHybridFormat = (format: EInvoiceFormat): boolean => format === 'factur-x' || format === 'zugferd';

/** The request's `einvoice` object: the profile only where the format has profiles (else the API refuses it). */
export function einvoiceRequest(
  format: EInvoiceFormat,
  profile: EInvoiceProfile,
  invoice: Record<string, unknown>,
): EInvoiceRequest {
  return isHybridFormat(format) ? { format, profile, invoice } : { format, invoice };
}

/** "Factur-X EN 16931", "XRechnung (UBL)". */
export function describeEInvoice(request: Pick<EInvoiceRequest, 'format' | 'profile'>): string {
  const format = FORMATS[request.format].label;
  return isHybridFormat(request.format) ? `${format} ${PROFILES[request.profile ?? DEFAULT_PROFILE]}` : format;
}

/**
 * The EN 16931 example of docs/einvoice.md (the issue's reference invoice: 3 lines at 19 % and 7 % VAT and
 * a document allowance, with everything XRechnung needs), valid for every format and profile as written.
 */
export const EXAMPLE_INVOICE: Record<string, unknown> = {
  number: 'RE-2026-0042',
  issue_date: '2026-11-20',
  due_date: '2026-12-04',
  delivery_date: '2026-11-18',
  currency: 'EUR',
  buyer_reference: '04011000-12345-67',
  order_reference: 'PO-7781',
  notes: ['Thank you for your order.'],
  seller: {
    name: 'Druckerei Beispiel GmbH',
    vat_id: 'DE123456789',
    legal_registration_id: 'HRB 12345',
    address: { line1: 'Hauptstraße 1', city: 'Berlin', postal_code: '10115', country_code: 'DE' },
    electronic_address: { scheme: 'EM', value: 'billing@druckerei.example' },
    contact: { name: 'Erika Muster', phone: '+49 30 1234567', email: 'erika@druckerei.example' },
  },
  buyer: {
    name: 'Stadtverwaltung Musterstadt',
    address: { line1: 'Rathausplatz 2', city: 'Musterstadt', postal_code: '12345', country_code: 'DE' },
    electronic_address: { scheme: '0204', value: '04011000-12345-67' },
  },
  lines: [
    {
      id: '1',
      name: 'Layout consulting',
      quantity: 10,
      unit_code: 'HUR',
      net_price: 120,
      vat_category: 'S',
      vat_rate: 19,
    },
    {
      id: '2',
      name: 'Printed handbook',
      quantity: 3,
      unit_code: 'H87',
      net_price: 24.9,
      vat_category: 'S',
      vat_rate: 7,
    },
    { id: '3', name: 'Shipping box', quantity: 2, unit_code: 'H87', net_price: 4.95, vat_category: 'S', vat_rate: 19 },
  ],
  allowances: [{ amount: 50, reason: 'Loyalty discount', reason_code: '95', vat_category: 'S', vat_rate: 19 }],
  payment: {
    means_code: '58',
    iban: 'DE02120300000000202051',
    bic: 'BYLADEM1001',
    account_name: 'Druckerei Beispiel GmbH',
    remittance_information: 'RE-2026-0042',
    terms: 'Payable within 14 days without deduction.',
  },
};

/** Whether the data looks like an invoice of the model (a seller, a buyer and lines), so it can be sent as one. */
export function looksLikeInvoice(data: unknown): boolean {
  return isObject(data) && isObject(data.seller) && isObject(data.buyer) && Array.isArray(data.lines);
}

/** Where the invoice comes from: the template's data (a template such as the e-invoice starter, whose data IS the invoice), or its own JSON. */
export type InvoiceSource = 'data' | 'json';

/** The run panel's e-invoice choices, as the user left them. */
export interface EInvoiceDraft {
  attach: boolean;
  format: EInvoiceFormat;
  profile: EInvoiceProfile;
  source: InvoiceSource;
  /** The invoice's own JSON text (source `json`). */
  json: string;
}

/** Not attached; Factur-X EN 16931 from the data when the data is an invoice, else from the example JSON. */
export function initialEInvoiceDraft(data: unknown): EInvoiceDraft {
  return {
    attach: false,
    format: 'factur-x',
    profile: DEFAULT_PROFILE,
    source: looksLikeInvoice(data) ? 'data' : 'json',
    json: JSON.stringify(EXAMPLE_INVOICE, null, 2),
  };
}

/** The `einvoice` to send (null when not attached), or why nothing can be sent yet. */
export function resolveEInvoice(
  draft: EInvoiceDraft,
  data: Record<string, unknown>,
): { request: EInvoiceRequest | null } | { error: string } {
  if (!draft.attach) return { request: null };
  if (draft.source === 'data') return { request: einvoiceRequest(draft.format, draft.profile, data) };
  let invoice: unknown;
  try {
    invoice = JSON.parse(draft.json);
  } catch (error) {
    return { error: `The invoice is not valid JSON (${(error as Error).message})` };
  }
  if (!isObject(invoice)) return { error: 'The invoice must be a JSON object, like the example' };
  return { request: einvoiceRequest(draft.format, draft.profile, invoice) };
}

/**
 * Whether a template variable is one the service fills when a run attaches an e-invoice (`einvoice`,
 * `einvoice.totals`, …: docs/einvoice.md, "In the template"): the data form does not ask for it.
 */
export const isFilledByEInvoice = (key: string): boolean => key === 'einvoice' || key.startsWith('einvoice.');

/** One failed rule of a refused e-invoice: the rule id, and where and why it failed. */
export interface EInvoiceFinding {
  /** The field inside `einvoice.invoice` as a path (`lines[2].vat_category`), or `einvoice.profile`, `pdf_variant`. */
  path: string;
  /** The `loc` inside `einvoice.invoice` (`["lines", 2, "vat_category"]`; `[]`: the invoice as a whole); null for a finding outside the invoice. */
  invoiceLoc: (string | number)[] | null;
  message: string;
  /** With the official rules on the caller's own XML (`einvoice.xml`): the XPath the rule was checked on. */
  xpath?: string;
}

/** The findings of one rule (`BR-CO-15`, `BR-CL-23`, `xml_schema`, …), in the order the API sent them. */
export interface EInvoiceRuleFindings {
  rule: string;
  /** The official rule set that found it (`XRechnung 3.0.2 (KoSIT schematron 2.5.0, CII)`), from `ctx.check`; absent for the built-in checks. */
  check?: string;
  findings: EInvoiceFinding[];
}

/** `["lines", 2, "vat_category"]` → `lines[2].vat_category`. */
export function formatPath(parts: readonly (string | number)[]): string {
  return parts.reduce<string>(
    (path, part) => (typeof part === 'number' ? `${path}[${part}]` : path ? `${path}.${part}` : part),
    '',
  );
}

const INVOICE_LOC = ['body', 'einvoice', 'invoice'];
const XML_LOC = ['body', 'einvoice', 'xml'];

/** Whether a 422 item is about the e-invoice (its loc lies in `einvoice`, or is the PDF variant it cannot go into). */
function isEInvoiceIssue(issue: ValidationIssue): boolean {
  return (
    (issue.loc[0] === 'body' && issue.loc[1] === 'einvoice') ||
    (issue.loc[0] === 'body' && issue.loc[1] === 'pdf_variant')
  );
}

const invoiceLocOf = (loc: readonly (string | number)[]) =>
  INVOICE_LOC.every((part, i) => loc[i] === part) ? loc.slice(INVOICE_LOC.length) : null;

/** The message without the `[rule id] ` the API puts first: the rule is the group's heading. */
function messageOf(issue: ValidationIssue): string {
  const prefix = `[${issue.type}] `;
  return issue.msg.startsWith(prefix) ? issue.msg.slice(prefix.length) : issue.msg;
}

/**
 * The findings of a 422 body, grouped by rule id, when it refused the e-invoice; `rest` holds the items
 * about anything else in the request. Null when the body has no e-invoice item (a generic error).
 */
export function einvoiceFindings(body: unknown): { rules: EInvoiceRuleFindings[]; rest: ValidationIssue[] } | null {
  if (!isObject(body) || !Array.isArray(body.detail)) return null;
  const issues = (body.detail as ValidationIssue[]).filter(
    (i) => isObject(i) && Array.isArray(i.loc) && typeof i.msg === 'string',
  );
  const ours = issues.filter(isEInvoiceIssue);
  if (ours.length === 0) return null;
  const rules: EInvoiceRuleFindings[] = [];
  for (const issue of ours) {
    const rule = typeof issue.type === 'string' && issue.type ? issue.type : 'value_error';
    let group = rules.find((r) => r.rule === rule);
    if (!group)
      rules.push(
        (group = { rule, ...(typeof issue.ctx?.check === 'string' ? { check: issue.ctx.check } : {}), findings: [] }),
      );
    const invoiceLoc = invoiceLocOf(issue.loc);
    // The official rules on the caller's XML: `["body", "einvoice", "xml", <XPath>]` (docs/einvoice.md, "The official rules").
    const xpath =
      XML_LOC.every((part, i) => issue.loc[i] === part) && typeof issue.loc[3] === 'string' ? issue.loc[3] : undefined;
    const path = formatPath(
      xpath !== undefined
        ? issue.loc.slice(1, 3)
        : (invoiceLoc ?? (issue.loc[0] === 'body' ? issue.loc.slice(1) : issue.loc)),
    );
    group.findings.push({ path, invoiceLoc, message: messageOf(issue), ...(xpath !== undefined ? { xpath } : {}) });
  }
  return { rules, rest: issues.filter((i) => !isEInvoiceIssue(i)) };
}

/** What a successful run delivered, for the result line: which e-invoice, and where its XML is. */
export function describeDelivered(request: Pick<EInvoiceRequest, 'format' | 'profile'>): string {
  const name = describeEInvoice(request);
  return isHybridFormat(request.format)
    ? `${name}, its XML embedded as factur-x.xml in a PDF/A-3b`
    : `${name}: the XML itself (application/xml), no PDF`;
}

/**
 * The 1-based line where each value of a JSON text starts, by path (`""` is the whole document,
 * `lines[1].unit_code` one field). For text JSON.parse accepted; used to mark findings in the editor.
 */
export function jsonValueLines(text: string): Map<string, number> {
  const lines = new Map<string, number>();
  let i = 0;
  let line = 1;
  const skipSpace = () => {
    for (; i < text.length && /\s/.test(text[i]!); i++) if (text[i] === '\n') line++;
  };
  const readString = (): string => {
    const start = i;
    for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  const readValue = (path: (string | number)[]): void => {
    skipSpace();
    lines.set(formatPath(path), line);
    const open = text[i];
    if (open === '{' || open === '[') {
      i++;
      for (let index = 0; ; index++) {
        skipSpace();
        if (text[i] === '}' || text[i] === ']') break;
        if (open === '{') {
          const key = readString();
          skipSpace();
          i++; // the colon
          readValue([...path, key]);
        } else readValue([...path, index]);
        skipSpace();
        if (text[i] === ',') i++;
      }
      i++;
    } else if (open === '"') readString();
    else while (i < text.length && !/[\s,\]}]/.test(text[i]!)) i++;
  };
  readValue([]);
  return lines;
}

/** The line of a field in the JSON text, or of its nearest enclosing value when the field is missing (a required field left out). */
export function lineOfField(lines: Map<string, number>, loc: readonly (string | number)[]): number | undefined {
  for (let n = loc.length; n >= 0; n--) {
    const line = lines.get(formatPath(loc.slice(0, n)));
    if (line !== undefined) return line;
  }
  return undefined;
}
