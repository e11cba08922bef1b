/** Shapes of the Pressroom API as the studio uses them (see shared/SPEC.md and the README). */

export type Plan = 'free' | 'pro' | 'enterprise';

/** GET /v1/capabilities: what this installation can do where its setup decides it. */
export interface Capabilities {
  einvoice_validation: { available: boolean; reason?: 'rules_off' | 'rules_not_installed' | 'rules_damaged' };
  einvoice_attachments: { available: boolean; official_rules: boolean };
  signature_timestamps: { service_authority: boolean };
}

/** `GET /v1/account`. */
export interface Account {
  credits: number;
  email: string | null;
  account_id: string;
  plan: Plan;
}

/**
 * `pdf` (paper, page setup), `image` (a canvas, rendered by POST /v1/image/create) or `pdf_form` (a
 * fillable PDF form filled from the data: docs/pdf-forms.md).
 */
export type TemplateKind = 'pdf' | 'image' | 'pdf_form';

/** An image template's canvas, in CSS pixels (16–5000 each). */
export interface Canvas {
  width: number;
  height: number;
}

/** Item of `GET /v1/templates`. */
export interface TemplateSummary {
  id: string;
  name: string;
  kind: TemplateKind;
  created_at: string;
  updated_at: string;
}

export type FieldType = 'string' | 'integer' | 'number' | 'boolean' | 'array';
export const FIELD_TYPES: readonly FieldType[] = ['string', 'integer', 'number', 'boolean', 'array'];

/** Item of an array field's `spec`: one attribute of each row. */
export interface FieldSpec {
  name: string;
  label: string;
  type?: string;
}
export const SPEC_TYPES: readonly string[] = ['text', 'number', 'boolean', 'array'];

/** Template field definition (`GET /v1/templates/{id}/fields`). */
export interface Field {
  key: string;
  label: string;
  type?: FieldType;
  required?: boolean;
  helpText?: string | null;
  spec?: FieldSpec[] | null;
  /** A form template's choice field (radio group, dropdown, list box): the values it takes. */
  options?: string[];
}

/** A form template's stored PDF (`form` of GET /v1/templates/{id}); null for any other kind. */
export interface FormFacts {
  pages: number;
  bytes: number;
  sha256: string;
  /** How many fields the form has. */
  fields: number;
}

/** The server's own paper sizes and rule (src/rendering/page-size.ts), not a copy. */
export {
  canvasPage,
  PAPER_FORMAT_NAMES as PAGE_FORMATS,
  pageSizeProblem,
  type PaperFormat as PageFormat,
} from '../../../src/rendering/page-size.js';
import type { PaperFormat as PageFormat } from '../../../src/rendering/page-size.js';
export type Orientation = 'portrait' | 'landscape';
export type MarginSide = 'top' | 'right' | 'bottom' | 'left';
export const MARGIN_SIDES: readonly MarginSide[] = ['top', 'right', 'bottom', 'left'];

export interface PageSetup {
  format?: PageFormat;
  /** A custom paper size (both or neither), instead of format. */
  width?: string;
  height?: string;
  orientation?: Orientation;
  margin?: Partial<Record<MarginSide, string>>;
  header_html?: string;
  footer_html?: string;
  /** Tagged (accessible) PDF with outline; false prints without. Absent = true. */
  tagged?: boolean;
  pdf_ua?: boolean;
}

/** A full template (`GET /v1/templates/{id}`). */
export interface Template {
  id: string;
  name: string;
  html: string;
  css: string | null;
  fields: Field[];
  fields_inferred: boolean;
  sample_data: Record<string, unknown> | null;
  page: PageSetup | null;
  kind: TemplateKind;
  canvas: Canvas | null;
  /** Strict mode: missing required fields and undefined variables are a 422, not warnings. Absent (older servers) = false. */
  strict?: boolean;
  /** A pdf_form template's PDF; null (or absent, older servers) for any other kind. */
  form?: FormFacts | null;
  created_at: string;
  updated_at: string;
}

/** Item of `GET /v1/templates/{id}/layers`: an element a modification of POST /v1/image/create can address. */
export interface TemplateLayer {
  name: string;
  tag: string;
  type: 'text' | 'image' | 'shape' | 'background';
  current_text?: string;
  modifiable: string[];
}

/** One item of `modifications` on POST /v1/image/create. */
export interface Modification {
  name: string;
  text?: string;
  image_url?: string;
  color?: string;
  background?: string;
  hidden?: boolean;
}

export type ImageFormat = 'png' | 'jpeg' | 'webp';

/** Item of `GET /v1/templates/{id}/versions`. */
export interface TemplateVersion {
  version_number: number;
  tag: string;
  description: string | null;
  created_at: string;
}

/** `GET /v1/templates/{id}/versions/{n}`: a version with its snapshot. */
export interface TemplateVersionContent extends TemplateVersion {
  name: string;
  html: string;
  css: string | null;
  fields: Field[];
  fields_inferred: boolean;
  sample_data: Record<string, unknown> | null;
  page: PageSetup | null;
  strict?: boolean;
}

export type JobStatus = 'pending' | 'processing' | 'completed' | 'failed';
export const JOB_STATUSES: readonly JobStatus[] = ['pending', 'processing', 'completed', 'failed'];

export interface Job {
  id: string;
  status: JobStatus;
  template_id: string;
  export_type: string;
  filename?: string | null;
  store_s3: boolean;
  created_at: string;
  updated_at: string;
  completed_at?: string | null;
  result_url?: string | null;
  result_filename?: string | null;
  result_expires_at?: string | null;
  result_s3_bucket?: string | null;
  result_s3_key?: string | null;
  error_message?: string | null;
  error_code?: string | null;
  /** The template version the job renders (its tag when accepted); null for the draft. */
  version?: { number: number; tag: string | null } | null;
  /** Issue 41: with an e-invoice, the checks that judged it (`EN16931 1.3.16`, `built-in`). */
  einvoice_checks?: string;
  /** Issue 13: once completed, what the document needed and did not get (absent when nothing; lib/warnings.ts reads it). */
  warnings?: unknown;
}

export interface JobList {
  jobs: Job[];
  total: number;
  limit: number;
  offset: number;
}

export interface Transaction {
  transaction_ref: string;
  transaction_type: 'PDFGEN' | 'REFUND' | 'PURCHASE' | 'BONUS';
  template_id: string | null;
  /** What a PDFGEN without a template paid for: the PDF tool (`merge`, `extract-pages`, `rotate`); absent on older servers. */
  tool?: string | null;
  /** A REFUND: the PDFGEN it gives back, with that charge's template or tool (absent on older servers). */
  refunds?: { transaction_ref: string; template_id: string | null; tool: string | null } | null;
  /** The background job (and batch) a PDFGEN paid for or a REFUND gave back; null otherwise (absent on older servers). */
  job_id?: string | null;
  batch_id?: string | null;
  exec_tm: number | null;
  credits: number;
  created_at: string;
}

export interface TransactionList {
  transactions: Transaction[];
  total: number;
  limit: number;
  offset: number;
}

/** `GET /v1/integrations/s3` (answers 404 S3_NOT_CONFIGURED when unset). */
export interface S3Config {
  configured: boolean;
  endpoint_url?: string;
  access_key_id?: string;
  secret_access_key_masked?: string;
  bucket_name?: string;
  default_prefix?: string;
}

export interface ApiKeyInfo {
  prefix: string;
  created_at: string;
  revoked_at: string | null;
}

/** `POST /v1/pdf/create` with export_type url. */
export interface CreateUrlResult {
  url: string;
  filename: string;
  credits_remaining: number;
  expires_in: number;
  /** Issue 13: what the document needed and did not get (absent on older servers). */
  warnings?: unknown;
  /** Issue 41: with an e-invoice, the checks that judged it (`EN16931 1.3.16 + XRechnung 3.0.2`, `built-in`). */
  einvoice_checks?: string;
}

/** `POST /v1/pdf/create-async`. */
export interface CreateAsyncResult {
  job_id: string;
  status: JobStatus;
  credits_remaining: number;
}

/** One finding of an official rule (`POST /v1/einvoice/validate`, issue 41). */
export interface RuleFinding {
  /** The rule id (`BR-DE-15`, `PEPPOL-EN16931-R001`), or `xml_schema` for a schema finding. */
  rule: string;
  severity: 'fatal' | 'warning';
  message: string;
  /** The XPath the rule was checked on; for a schema finding, its line. */
  location: string;
  line?: number;
}

/** One check of the report: the schema, the CEN EN 16931 schematron, KoSIT's for XRechnung. */
export interface RuleCheck {
  /** What ran, with its version: `EN16931 1.3.16 (CEN schematron, CII)`. */
  check: string;
  /** not_run: a check before it failed. */
  status: 'passed' | 'failed' | 'not_run';
  /** At most 100; `more` counts the rest. */
  findings: RuleFinding[];
  more?: number;
}

/** `POST /v1/einvoice/validate`: an e-invoice judged by the official rules (docs/einvoice-rules.md). */
export interface EInvoiceValidationReport {
  valid: boolean;
  /** `EN16931 1.3.16 + XRechnung 3.0.2`, or `built-in` for Factur-X MINIMUM and BASIC WL. */
  einvoice_checks: string;
  source: {
    kind: 'xml' | 'pdf';
    /** For a PDF: the embedded file judged (factur-x.xml, zugferd-invoice.xml, xrechnung.xml). */
    attachment?: string;
    syntax: 'CII' | 'UBL';
    /** The root element: CrossIndustryInvoice, Invoice or CreditNote. */
    document: string;
    /** BT-24 as the XML states it ('' when it states none). */
    specification_identifier: string;
    /** What it was judged as: XRechnung, a Factur-X profile, or EN 16931. */
    profile: string;
  };
  checks: RuleCheck[];
}

/** From the X-RateLimit-* headers of the last authenticated response. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Unix seconds when the binding window resets. */
  resetAt: number;
}

/** One item of a 422 validation body. */
export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
  ctx?: Record<string, unknown>;
}

/** A template using an asset: its draft prints the current revision, its versions the revisions they were published with (issue 50). */
export interface AssetUser {
  template_id: string;
  template_name: string;
  draft: boolean;
  versions: { version_number: number; tag: string; revision: number }[];
  /** The template computes asset names, so it may use this one. */
  computed: boolean;
}

/** An item of `GET /v1/assets` and the answer of `POST /v1/assets` (issue 13; revisions and users: issue 50). */
export interface AssetInfo {
  name: string;
  content_type: string;
  size: number;
  sha256: string;
  created_at: string;
  updated_at: string;
  /** The current revision (servers before issue 50 send none). */
  revision?: number;
  used_by?: AssetUser[];
  /** Upload answers only: the name had a file already. */
  replaced?: boolean;
}

/** A batch's state (issue 40, docs/batches.md). */
export type BatchStatus =
  | 'pending'
  | 'processing'
  | 'cancelling'
  | 'assembling'
  | 'completed'
  | 'completed_with_errors'
  | 'failed'
  | 'cancelled';
/** The statuses after which a batch changes no more. */
export const BATCH_ENDED: readonly BatchStatus[] = ['completed', 'completed_with_errors', 'failed', 'cancelled'];
export type BatchOutput = 'links' | 'zip' | 'merged';

/** `GET /v1/pdf/batches/{id}`, and an item of `GET /v1/pdf/batches`. */
export interface Batch {
  batch_id: string;
  status: BatchStatus;
  template_id: string;
  version: { number: number; tag: string | null } | null;
  output: BatchOutput;
  total: number;
  completed: number;
  failed: number;
  cancelled: number;
  processing: number;
  pending: number;
  created_at: string;
  started_at: string | null;
  completed_at: string | null;
  /** While it runs, from the rate so far; null until two items are done. */
  estimated_seconds_left: number | null;
  /** The zip or merged PDF once built (null for links). */
  result: {
    url: string | null;
    filename: string;
    expires_at: string | null;
    s3_bucket: string | null;
    s3_key: string | null;
  } | null;
  error: { code: string; message: string } | null;
}

export interface BatchList {
  batches: Batch[];
  total: number;
  limit: number;
  offset: number;
}

export type BatchItemStatus = 'pending' | 'processing' | 'completed' | 'failed' | 'cancelled';

/** An item of `GET /v1/pdf/batches/{id}/items`. */
export interface BatchItem {
  /** Row number from 0. */
  index: number;
  status: BatchItemStatus;
  filename: string;
  url: string | null;
  expires_at: string | null;
  s3_bucket: string | null;
  s3_key: string | null;
  error: { code: string; message: string } | null;
}

export interface BatchItemList {
  items: BatchItem[];
  total: number;
  limit: number;
  offset: number;
}

/** `POST /v1/pdf/batches` (202). */
export interface BatchAccepted {
  batch_id: string;
  status: 'pending';
  total: number;
  credits_remaining: number;
}
