/**
 * Delivering a result: a signed, expiring link to a stored file, the bytes, or the customer's own
 * bucket (`CustomerStorage`, implemented by customer-buckets/). Shared by documents, PDF tools and
 * batches, none of which needs the others to hand a file over.
 */
import { AppError } from '../shared/errors.js';
import type { FileService } from './files.js';
import { bodyBytes, type BlobBody } from '../storage/blob-store.js';

export type ExportType = 'url' | 'binary';

/** Where a document went. */
export type Delivery =
  | { kind: 'url'; url: string; filename: string; expiresAt: number; fileId: string }
  /** `pdf` holds the result's bytes: a PDF, or (image/create) an image of `contentType`. */
  | { kind: 'binary'; pdf: Buffer; filename: string; contentType?: string }
  | { kind: 's3'; bucket: string; key: string; filename: string }
  /** Several results (a split), each a signed link; `label` says which pages it holds. */
  | { kind: 'urls'; files: { url: string; filename: string; label: string; fileId: string }[]; expiresAt: number };

/** Uploads to the customer's own bucket (the S3 integration). */
export interface CustomerStorage {
  /** The bucket and key a document would go to; throws INVALID_REQUEST when S3 is not configured. */
  resolveTarget(
    accountId: string,
    target: { filepath?: string | null; bucket?: string | null; filename: string },
  ): Promise<{ bucket: string; key: string }>;
  upload(
    accountId: string,
    target: { bucket: string; key: string },
    pdf: BlobBody,
    contentType?: string,
  ): Promise<void>;
}

/** `invoice` → `invoice.pdf`; a trailing `.pdf` given by the caller is not doubled. */
export function pdfFilename(name: string | null | undefined): string {
  const base = (name ?? '').replace(/\.pdf$/i, '') || 'document';
  return `${base}.pdf`;
}

/**
 * Hands a result to the client: a signed, expiring link to a stored file (`url`), or the bytes
 * (`binary`). A PDF named from `options.filename` unless `file` says otherwise (images).
 */
export async function deliverToClient(
  files: FileService,
  accountId: string,
  pdf: BlobBody,
  options: { exportType: ExportType; filename: string; expirationSeconds: number },
  file: { filename: string; contentType: string } = {
    filename: pdfFilename(options.filename),
    contentType: 'application/pdf',
  },
): Promise<Delivery> {
  const { filename, contentType } = file;
  if (options.exportType === 'binary') return { kind: 'binary', pdf: await bodyBytes(pdf), filename, contentType };
  const stored = await files.store(accountId, pdf, filename, options.expirationSeconds, contentType);
  return { kind: 'url', url: stored.url, filename, expiresAt: stored.expiresAt, fileId: stored.fileId };
}

/** How a result is to be delivered: the request's export type, name and link lifetime, or its bucket. */
export interface DeliveryRequest {
  exportType: ExportType;
  filename: string;
  expirationSeconds: number;
  /** To the customer's own bucket instead (the S3 integration), at `s3Filepath` in `s3Bucket`. */
  storeS3?: boolean;
  s3Filepath?: string | null;
  s3Bucket?: string | null;
  /** The file's name and type. @defaultValue a PDF named from `filename` */
  file?: { filename: string; contentType: string };
}

export interface Deliverer {
  /** Hands `body` over as `request` asks: a link, the bytes, or the customer's bucket. */
  deliver(accountId: string, body: BlobBody, request: DeliveryRequest): Promise<Delivery>;
  /** The customer-bucket uploader; INVALID_REQUEST when this installation has none. */
  customerBucket(): CustomerStorage;
}

export function createDeliverer(deps: { files: FileService; customerStorage?: CustomerStorage }): Deliverer {
  const customerBucket = (): CustomerStorage => {
    if (!deps.customerStorage)
      throw new AppError(
        'INVALID_REQUEST',
        'S3 storage is not configured for this account; configure it with POST /v1/integrations/s3.',
      );
    return deps.customerStorage;
  };
  return {
    customerBucket,
    async deliver(accountId, body, request) {
      const file = request.file ?? { filename: pdfFilename(request.filename), contentType: 'application/pdf' };
      if (!request.storeS3) return deliverToClient(deps.files, accountId, body, request, file);
      const storage = customerBucket();
      const target = await storage.resolveTarget(accountId, {
        filepath: request.s3Filepath,
        bucket: request.s3Bucket,
        filename: file.filename,
      });
      await storage.upload(accountId, target, body, file.contentType);
      return { kind: 's3', bucket: target.bucket, key: target.key, filename: file.filename };
    },
  };
}
