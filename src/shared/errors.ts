/**
 * Application errors carry a stable code; `http/errors.ts` is the only place that maps a code to an
 * HTTP status and envelope. Domain code throws `AppError`, never HTTP-shaped objects.
 */
export type ErrorCode =
  | 'INVALID_REQUEST'
  | 'UNAUTHORIZED'
  | 'INSUFFICIENT_CREDITS'
  /** A grant that would take the balance past the most an account may hold (credits/ledger.ts). */
  | 'BALANCE_LIMIT_EXCEEDED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'TEMPLATE_NOT_FOUND'
  | 'JOB_NOT_FOUND'
  | 'BATCH_NOT_FOUND'
  /** A `version` (tag or number) the template does not have. */
  | 'VERSION_NOT_FOUND'
  /** Another version of the template already has this tag. */
  | 'VERSION_TAG_EXISTS'
  /** An asset name a published version still prints (assets/assets.ts): delete the versions first. */
  | 'ASSET_IN_USE'
  /** An endpoint of the hosted service this self-hosted one does not offer (AI authoring). */
  | 'NOT_IMPLEMENTED'
  | 'ACCOUNT_NOT_FOUND'
  | 'API_KEY_NOT_FOUND'
  /** Revoking the account's last working API key (self-service): create another first (accounts/accounts.ts). */
  | 'LAST_API_KEY'
  | 'FILE_NOT_FOUND'
  | 'LINK_EXPIRED'
  | 'LINK_INVALID'
  | 'S3_NOT_CONFIGURED'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'IDEMPOTENCY_KEY_IN_USE'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'RATE_LIMITED'
  | 'TEMPLATE_SYNTAX_ERROR'
  | 'TEMPLATE_RENDER_ERROR'
  | 'TEMPLATE_TIMEOUT'
  | 'TEMPLATE_OUTPUT_TOO_LARGE'
  /** The document went past one of its bounds: PDF bytes, pages, decoded image pixels, Chromium memory or an inlined header/footer (browser/pages/document-bounds.ts). */
  | 'DOCUMENT_TOO_LARGE'
  | 'RENDER_TIMEOUT'
  /** A synchronous request whose document is estimated, after layout, to print past the render deadline: use create-async (docs/long-documents.md "Deadlines"). */
  | 'DOCUMENT_TOO_LONG_FOR_SYNC'
  | 'RENDER_FAILED'
  | 'RENDERER_BUSY'
  | 'PDFA_CONVERSION_FAILED'
  /** qpdf could not finish a PDF tool's work on inputs it had already read (docs/pdf-tools.md). */
  | 'PDF_TOOL_FAILED'
  /** A PDF tool's qpdf run passed PRESSROOM_PDF_TOOLS_TIMEOUT_MS and was stopped. */
  | 'PDF_TOOL_TIMEOUT'
  /** A PDF tool's qpdf run went past its memory or CPU ceiling (pdf/qpdf.ts): the PDF asks for more than one run may spend. */
  | 'PDF_TOO_COMPLEX'
  /** An e-invoice XML check went past its time or memory ceiling (einvoice/xmllint/xmllint-pool.ts): the XML asks for more than one check may spend. */
  | 'XML_TOO_COMPLEX'
  /** PRESSROOM_EINVOICE_RULES=required (or POST /v1/einvoice/validate) and no rules pack is installed (einvoice/rules/). */
  | 'EINVOICE_RULES_MISSING'
  /** The active rules pack cannot be used (a file missing or changed): reinstall it (einvoice/rules/). */
  | 'EINVOICE_RULES_DAMAGED'
  | 'STORAGE_ERROR'
  | 'S3_UPLOAD_FAILED'
  | 'SERVICE_UNAVAILABLE'
  /** An async job whose worker stopped (crash, kill) on every attempt; see docs/jobs.md. */
  | 'JOB_INTERRUPTED'
  /** A signing certificate name the account does not have (signing/certificates.ts). */
  | 'CERTIFICATE_NOT_FOUND'
  /** The account already has a signing certificate of this name. */
  | 'CERTIFICATE_EXISTS'
  /** The time-stamp authority of a `timestamp: true` signature was down, too slow or answered no token (signing/tsa.ts). */
  | 'TSA_FAILED'
  /** libpdf could not sign a PDF it had read (signing/sign.ts). */
  | 'SIGNING_FAILED'
  /** A task on a signing thread (a signature, opening an uploaded certificate) passed its deadline and its thread was ended (signing/signing-threads.ts). */
  | 'SIGNING_TIMEOUT'
  | 'INTERNAL_ERROR';

/** Extra, client-safe facts about an error (never secrets). */
export interface ErrorDetails {
  /** Template line (1-based) where a template error happened, when the engine knows it. */
  line?: number;
  column?: number;
  /** Seconds until a retry may succeed (rate limits, busy renderer). */
  retryAfterSeconds?: number;
  [key: string]: unknown;
}

export class AppError extends Error {
  override readonly name = 'AppError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: { cause?: unknown; details?: ErrorDetails } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
  }
  get details(): ErrorDetails | undefined {
    return this.options.details;
  }
}

/**
 * A schema-style validation failure raised outside the HTTP schema (for example a data object nested
 * too deep). Rendered as the 422 `{detail:[{loc,msg,type}]}` envelope.
 */
export class ValidationError extends Error {
  override readonly name = 'ValidationError';
  constructor(readonly issues: ValidationIssue[]) {
    super(issues.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; '));
  }
}

/**
 * A failure answered in the spec's `{detail: "<text>"}` shape (400): S3 save and S3 test failures.
 * The message is shown to the customer, so it must never hold a secret.
 */
export class DetailError extends Error {
  override readonly name = 'DetailError';
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

export interface ValidationIssue {
  loc: (string | number)[];
  msg: string;
  type: string;
  /** Machine-readable facts about the failure (as in FastAPI), e.g. the template line. */
  ctx?: Record<string, unknown>;
}

export function isAppError(error: unknown, code?: ErrorCode): error is AppError {
  return error instanceof AppError && (code === undefined || error.code === code);
}
