/**
 * Table types for Kysely. Times are epoch milliseconds (integers) in both dialects, so comparisons and
 * ordering behave the same on SQLite and PostgreSQL; the HTTP layer turns them into ISO 8601.
 */
import type { Generated, Insertable, Selectable } from 'kysely';

export interface AccountsTable {
  id: string;
  email: string | null;
  plan: 'free' | 'pro' | 'enterprise';
  credits: number;
  /** Per-account overrides of the plan's limits; null = the plan's value. */
  rate_limit_per_minute: number | null;
  rate_limit_per_day: number | null;
  created_at: number;
  /** Access tokens issued before this moment (epoch ms) are refused; null = never revoked. */
  tokens_valid_after: number | null;
}

export interface ApiKeysTable {
  /** First 12 characters of the key: its public lookup part. */
  prefix: string;
  account_id: string;
  /** SHA-256 hex of the whole key. */
  key_hash: string;
  created_at: number;
  revoked_at: number | null;
}

export interface CreditTransactionsTable {
  /** Insertion order; the newest-first listing sorts on it. */
  seq: Generated<number>;
  transaction_ref: string;
  account_id: string;
  transaction_type: 'PDFGEN' | 'REFUND' | 'PURCHASE' | 'BONUS';
  template_id: string | null;
  exec_tm: number | null;
  /** Positive = consumed, negative = added. */
  credits: number;
  /** The PDFGEN a REFUND reverses (unique: a generation is refunded at most once). */
  refund_of: string | null;
  /** What a PDFGEN without a template paid for: the PDF tool (`merge`, `extract-pages`, `rotate`); else null. */
  tool: string | null;
  /** The job whose generation a PDFGEN paid for, or a REFUND gave back; null for a synchronous one, a tool or a grant. */
  job_id: string | null;
  /** That job's batch, when it is a batch's item. */
  batch_id: string | null;
  created_at: number;
}

/** What a template says: the columns a draft (`templates`) and each version (`template_versions`) keep. */
export interface TemplateContentColumns {
  name: string;
  html: string;
  css: string | null;
  /** JSON array of field definitions. */
  fields: string;
  /** 1 when `fields` was inferred from the template (re-inferred on update), 0 when given by the user. */
  fields_inferred: number;
  /** JSON object or null. */
  sample_data: string | null;
  /** JSON object or null. */
  page: string | null;
  /** `pdf` or `image` (migration 0012), or `pdf_form` (migration 0023). */
  kind: 'pdf' | 'image' | 'pdf_form';
  /** JSON `{width, height}` for an image template, null for a PDF one. */
  canvas: string | null;
  /** 1 for a strict template (undefined variables and missing required fields are errors), else 0 (migration 0014). */
  strict: number;
  /** A `pdf_form` template's PDF in the blob store (never rewritten: a new PDF gets a new key); null otherwise (migration 0023). */
  form_key: string | null;
  /** JSON of what was read of that PDF (pdf-forms/form-fields.ts FormFacts); null otherwise. */
  form: string | null;
}

export interface TemplatesTable extends TemplateContentColumns {
  id: string;
  account_id: string;
  created_at: number;
  updated_at: number;
  /** 1 once the draft's asset names are in template_asset_uses (migration 0019). */
  asset_uses_known: number;
}

/** An immutable snapshot of a template (see src/templates/template-versions.ts). */
export interface TemplateVersionsTable extends TemplateContentColumns {
  template_id: string;
  /** 1, 2, 3… per template; never reused after a delete. */
  version_number: number;
  /** Unique per template. */
  tag: string;
  description: string | null;
  created_at: number;
  /** The account's asset counter when it was published: it prints the asset revisions newest then (migration 0019). */
  asset_seq: number;
  /** 1 once its asset names are in template_asset_uses. */
  asset_uses_known: number;
}

/** The last version number given out per template. */
export interface TemplateVersionCountersTable {
  template_id: string;
  last_number: number;
}

export interface FilesTable {
  id: string;
  account_id: string;
  storage_key: string;
  /** Download name, with `.pdf`. */
  filename: string;
  size: number;
  created_at: number;
  expires_at: number;
}

/** One row per asset name: its current revision (migration 0019; the files are `asset_revisions`). */
export interface AssetsTable {
  account_id: string;
  name: string;
  /** The revision the draft prints (asset_revisions.revision). */
  revision: number;
  /** First upload under this name. */
  created_at: number;
  /** Last upload under this name. */
  updated_at: number;
}

/** Every kept file of an asset name (src/assets/asset-revisions.ts). */
export interface AssetRevisionsTable {
  account_id: string;
  name: string;
  /** 1, 2, 3… per name. */
  revision: number;
  /** The account's asset counter when it was uploaded (asset_counters); versions pin by it. */
  seq: number;
  content_type: string;
  size: number;
  sha256: string;
  storage_key: string;
  created_at: number;
}

/** The last asset counter given out per account. */
export interface AssetCountersTable {
  account_id: string;
  last_seq: number;
}

/** An asset name a template's draft (version_number 0) or version names; `*` when it computes names. */
export interface TemplateAssetUsesTable {
  template_id: string;
  version_number: number;
  name: string;
}

export interface IdempotencyKeysTable {
  account_id: string;
  idem_key: string;
  /** SHA-256 of the endpoint and the canonical request body. */
  request_hash: string;
  state: 'pending' | 'done';
  /** The first answer, replayed to repeats (JSON). */
  response: string | null;
  created_at: number;
  expires_at: number;
  /** While `pending`: the process working on it (host:pid:random), for operators. */
  holder: string | null;
  /** While `pending`: the holder renews this; past it, the request is taken to have died and a retry may take the key over. */
  lease_until: number | null;
}

/**
 * A PDFGEN not yet resolved: it becomes final when the document is delivered (the row is deleted)
 * or is voided with exactly one REFUND (the row is deleted in the same transaction).
 */
export interface CreditReservationsTable {
  transaction_ref: string;
  account_id: string;
  /** The process holding a synchronous generation (`host:pid:random`), or `job:<id>` for a job. */
  holder: string;
  /** Sync generations: renewed while the process works; past it, any process voids the reservation. Null for jobs. */
  lease_until: number | null;
  created_at: number;
}

/** An asynchronous PDF job; the row is the queue (see src/jobs/jobs-store.ts). */
export interface JobsTable {
  seq: Generated<number>;
  id: string;
  account_id: string;
  template_id: string;
  status: 'pending' | 'processing' | 'completed' | 'failed';
  /** JSON: the request's `data`. */
  data: string;
  /** JSON: GenerationOptions. */
  options: string;
  /** The custom filename as given (null when none). */
  filename: string | null;
  store_s3: number;
  webhook_url: string | null;
  /** AES-256-GCM sealed (shared/crypto.ts), never returned. */
  webhook_secret: string | null;
  /** The PDFGEN that paid for the job; a permanent failure refunds exactly it. */
  transaction_ref: string;
  /** Claims so far (a claim whose worker died counts). */
  attempts: number;
  /** Not claimable before this time (retry backoff). */
  run_at: number;
  locked_by: string | null;
  locked_until: number | null;
  last_error: string | null;
  error_code: string | null;
  error_message: string | null;
  result_url: string | null;
  result_filename: string | null;
  result_expires_at: number | null;
  result_s3_bucket: string | null;
  result_s3_key: string | null;
  created_at: number;
  updated_at: number;
  /** First claim (queue latency = started_at − created_at). */
  started_at: number | null;
  completed_at: number | null;
  /** The `create-async` request's id; the worker's logs and the webhook carry it (null for older jobs). */
  request_id: string | null;
  /** The template version the job renders (null: the draft as it is when the job runs). */
  version_number: number | null;
  /** That version's tag when the job was accepted (shown on the job). */
  version_tag: string | null;
  /** JSON: the render's DocumentWarnings, null when there were none (issue 13). */
  warnings: string | null;
  /** JSON: what the e-invoice checks concluded at acceptance, `{checks, warnings}` (EInvoiceVerdict); null without an e-invoice (issue 41). */
  einvoice_verdict: string | null;
  /** The PDF/UA check a completed job's file passed (`accessibility_checks`); null otherwise (issue 53). */
  accessibility_checks: string | null;
  /** The batch this job is an item of (issue 40), and its place in it from 0; null for a create-async job. */
  batch_id: string | null;
  batch_index: number | null;
  /** The stored file of a url delivery (a batch's zip or merged PDF reads it back). */
  result_file_id: string | null;
}

/**
 * The states of a batch (src/batches/): `intake` while its items are being queued (not yet accepted,
 * shown to nobody), `cancelling` while a cancel stops its items that have not started.
 */
export type BatchStatus =
  | 'intake'
  | 'pending'
  | 'processing'
  | 'cancelling'
  | 'assembling'
  | 'completed'
  | 'completed_with_errors'
  | 'failed'
  | 'cancelled';

/** A batch of documents from one template; its items are job rows (issue 40). */
export interface BatchesTable {
  seq: Generated<number>;
  id: string;
  account_id: string;
  template_id: string;
  version_number: number | null;
  version_tag: string | null;
  status: BatchStatus;
  output: 'links' | 'zip' | 'merged';
  /** The zip or merged file's name, without extension. */
  filename: string;
  /** JSON: the GenerationOptions every item shares (the assembled file's delivery too). */
  options: string;
  total: number;
  /** Items that reached an end; equals total when the batch moves on. */
  settled: number;
  completed: number;
  failed: number;
  cancelled: number;
  webhook_url: string | null;
  /** AES-256-GCM sealed, never returned. */
  webhook_secret: string | null;
  /** The lease of the step in progress: intake, cancelling or assembling. */
  locked_by: string | null;
  locked_until: number | null;
  attempts: number;
  result_file_id: string | null;
  result_url: string | null;
  result_filename: string | null;
  result_expires_at: number | null;
  result_s3_bucket: string | null;
  result_s3_key: string | null;
  error_code: string | null;
  error_message: string | null;
  request_id: string | null;
  created_at: number;
  updated_at: number;
  started_at: number | null;
  completed_at: number | null;
}

/** One webhook notification; the row is its retry queue (see src/webhooks/deliveries-store.ts). */
export interface WebhookDeliveriesTable {
  /** The Standard Webhooks `webhook-id`, constant across retries. */
  id: string;
  job_id: string;
  event: 'pdf.completed' | 'pdf.failed' | 'pdf.batch.completed' | 'pdf.batch.cancelled' | 'pdf.batch.failed';
  url: string;
  /** Sealed copy of the job's secret, or null (unsigned). */
  secret: string | null;
  /** The exact body bytes sent on every attempt. */
  payload: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: number;
  locked_by: string | null;
  locked_until: number | null;
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  delivered_at: number | null;
  /** Copied from the job: sent as `x-request-id` and logged with every attempt (null for older rows). */
  request_id: string | null;
}

export interface S3IntegrationsTable {
  account_id: string;
  endpoint_url: string;
  access_key_id: string;
  /** AES-256-GCM, key derived from the master secret for this purpose only. */
  secret_access_key_sealed: string;
  bucket_name: string;
  default_prefix: string;
  created_at: number;
  updated_at: number;
}

/** A signing certificate of an account (signing/certificates.ts). */
export interface SigningCertificatesTable {
  account_id: string;
  name: string;
  subject: string;
  issuer: string;
  /** Hex, as OpenSSL prints it. */
  serial: string;
  not_before: number;
  not_after: number;
  fingerprint_sha256: string;
  /** The PKCS#12 file and its password, sealed together (AES-256-GCM, key derived for this purpose only). */
  pkcs12_sealed: string;
  created_at: number;
}

export interface Database {
  s3_integrations: S3IntegrationsTable;
  signing_certificates: SigningCertificatesTable;
  jobs: JobsTable;
  batches: BatchesTable;
  webhook_deliveries: WebhookDeliveriesTable;
  files: FilesTable;
  assets: AssetsTable;
  asset_revisions: AssetRevisionsTable;
  asset_counters: AssetCountersTable;
  template_asset_uses: TemplateAssetUsesTable;
  idempotency_keys: IdempotencyKeysTable;
  accounts: AccountsTable;
  api_keys: ApiKeysTable;
  credit_transactions: CreditTransactionsTable;
  credit_reservations: CreditReservationsTable;
  templates: TemplatesTable;
  template_versions: TemplateVersionsTable;
  template_version_counters: TemplateVersionCountersTable;
}

export type AccountRow = Selectable<AccountsTable>;
export type TemplateRow = Selectable<TemplatesTable>;
export type TemplateVersionRow = Selectable<TemplateVersionsTable>;
export type TransactionRow = Selectable<CreditTransactionsTable>;
export type NewTransaction = Insertable<CreditTransactionsTable>;
export type JobRow = Selectable<JobsTable>;
export type NewJob = Insertable<JobsTable>;
export type BatchRow = Selectable<BatchesTable>;
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>;
