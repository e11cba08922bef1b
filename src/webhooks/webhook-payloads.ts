/**
 * The two webhook events. The payload is serialised once, when the job finishes, and stored: every
 * attempt sends exactly those bytes, so signatures and receiver-side de-duplication stay stable.
 */

/** A batch's events (issue 40): one per batch, when it ends. */
export type BatchEvent = 'pdf.batch.completed' | 'pdf.batch.cancelled' | 'pdf.batch.failed';

/** Event names. */
export type WebhookEvent = 'pdf.completed' | 'pdf.failed' | BatchEvent;

/** Where a completed job's document is. `url` is null when it went to the customer's S3 bucket. */
export interface CompletedResult {
  url: string | null;
  filename: string;
  s3Bucket?: string | null;
  s3Key?: string | null;
  /** The render's warnings (issue 13); sent only when there are some. */
  warnings?: { code: string; message: string; url?: string }[];
}

/**
 * The checks that judged the job's document, as on the job: the rule sets of its e-invoice
 * (`einvoice_checks`), and the PDF/UA check its file passed (`accessibility_checks`, completed only).
 */
export type ChecksFields = { einvoiceChecks?: string | null; accessibilityChecks?: string | null };

const checksOf = (fields: ChecksFields) => ({
  ...(fields.einvoiceChecks ? { einvoice_checks: fields.einvoiceChecks } : {}),
  ...(fields.accessibilityChecks ? { accessibility_checks: fields.accessibilityChecks } : {}),
});

/** `{event:"pdf.completed", job_id, status:"completed", result:{url, filename[, s3_bucket, s3_key]}[, warnings:[{code, message, url?}]][, einvoice_checks][, accessibility_checks]}` */
export function completedPayload(jobId: string, result: CompletedResult, fields: ChecksFields = {}): string {
  const body: Record<string, unknown> = { url: result.url, filename: result.filename };
  if (result.s3Bucket && result.s3Key) {
    body.s3_bucket = result.s3Bucket;
    body.s3_key = result.s3Key;
  }
  const warnings = result.warnings && result.warnings.length > 0 ? { warnings: result.warnings } : {};
  return JSON.stringify({
    event: 'pdf.completed',
    job_id: jobId,
    status: 'completed',
    result: body,
    ...warnings,
    ...checksOf(fields),
  });
}

/** `{event:"pdf.failed", job_id, status:"failed", error:{code, message}[, einvoice_checks]}` */
export function failedPayload(
  jobId: string,
  error: { code: string; message: string },
  fields: ChecksFields = {},
): string {
  return JSON.stringify({
    event: 'pdf.failed',
    job_id: jobId,
    status: 'failed',
    error: { code: error.code, message: error.message },
    ...checksOf(fields),
  });
}

/** What a batch's webhook tells. */
export interface BatchOutcome {
  batchId: string;
  status: string;
  counts: { total: number; completed: number; failed: number; cancelled: number };
  /** The zip or merged PDF; null for `links` (the items carry them) or when nothing was delivered. */
  result: { url: string | null; filename: string; s3Bucket?: string | null; s3Key?: string | null } | null;
}

/** `{event:"pdf.batch.…", batch_id, status, total, completed, failed, cancelled, result}` */
export function batchPayload(event: BatchEvent, outcome: BatchOutcome): string {
  const result = outcome.result
    ? {
        url: outcome.result.url,
        filename: outcome.result.filename,
        ...(outcome.result.s3Bucket && outcome.result.s3Key
          ? { s3_bucket: outcome.result.s3Bucket, s3_key: outcome.result.s3Key }
          : {}),
      }
    : null;
  return JSON.stringify({ event, batch_id: outcome.batchId, status: outcome.status, ...outcome.counts, result });
}
