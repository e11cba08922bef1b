/**
 * Turns S3 client failures into messages a customer can act on, naming the step that failed
 * (endpoint, bucket, access, write). Never includes credentials or raw server responses.
 */
import { findOutboundBlockedError } from '../net/outbound-blocked-error.js';
import { AppError } from '../shared/errors.js';

export type S3Step = 'connect' | 'bucket' | 'write';

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
]);

export function describeS3Failure(error: unknown, step: S3Step, bucket: string): string {
  if (findOutboundBlockedError(error))
    return 'Endpoint unreachable: it resolves to a private or reserved address, which is not allowed.';
  if (error instanceof AppError) return error.message;
  const e = error as {
    name?: string;
    code?: string;
    $metadata?: { httpStatusCode?: number };
    cause?: { code?: string };
  };
  const status = e.$metadata?.httpStatusCode;
  const code = e.code ?? e.cause?.code ?? '';
  switch (e.name) {
    case 'NoSuchBucket':
    case 'NotFound':
      return `Bucket not found: "${bucket}" does not exist at this endpoint.`;
    case 'InvalidAccessKeyId':
      return 'Access denied: the access key ID is not known to this endpoint.';
    case 'SignatureDoesNotMatch':
      return 'Access denied: the secret access key does not match the access key ID.';
    case 'AccessDenied':
    case 'Forbidden':
      return step === 'write'
        ? `Access denied: the credentials may not write to bucket "${bucket}".`
        : `Access denied: check the access key ID and secret, and that they may use bucket "${bucket}".`;
    case 'TimeoutError':
    case 'RequestTimeout':
      return 'Endpoint unreachable: the connection timed out.';
    default:
      break;
  }
  if (status === 404) return `Bucket not found: "${bucket}" does not exist at this endpoint.`;
  if (status === 403 || status === 401)
    return `Access denied: check the access key ID and secret, and that they may use bucket "${bucket}".`;
  if (
    NETWORK_CODES.has(code) ||
    /ECONNREFUSED|ENOTFOUND|socket hang up|getaddrinfo/i.test(String((error as Error)?.message))
  ) {
    return `Endpoint unreachable: the S3 endpoint could not be reached (${code || 'connection failed'}).`;
  }
  return `The S3 endpoint answered with an error${status ? ` (HTTP ${status})` : ''} during the ${step === 'write' ? 'test upload' : 'bucket check'}.`;
}
