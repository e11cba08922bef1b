/**
 * Builds S3 clients: one for the service's own storage (trusted operator config) and one per
 * customer bucket (untrusted endpoint, so every connection goes through the outbound guard).
 *
 * Settings that are not the SDK defaults, and why:
 * - `requestChecksumCalculation`/`responseChecksumValidation: 'WHEN_REQUIRED'`: since 3.729 the SDK
 *   adds CRC32 checksums (and aws-chunked trailers for streams) to every upload. Several
 *   S3-compatible stores reject or mis-store those, and the uploads we make are small Buffers.
 * - explicit connect/request timeouts: the SDK default request timeout is none at all.
 * - `maxAttempts` 3: the SDK's standard retry, written down.
 */
import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';
import { S3Client } from '@aws-sdk/client-s3';
import { checkUrl } from '../net/check-url.js';
import { createGuardedAgents, type GuardedAgents } from '../net/guarded-agents.js';
import { OutboundBlockedError } from '../net/outbound-blocked-error.js';
import type { OutboundPolicy } from '../net/resolve-checked-address.js';
import { AppError } from '../shared/errors.js';

/** Everything needed to build an S3Client. */
export interface S3ClientSettings {
  /** Custom endpoint (MinIO, R2, …); absent → AWS. */
  readonly endpoint?: string;
  readonly region: string;
  /** Bucket in the path instead of the host name; needed by most S3-compatible stores. */
  readonly forcePathStyle: boolean;
  /** Absent → the SDK's standard chain (AWS_ACCESS_KEY_ID…, profiles, instance roles). */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** @defaultValue 5000 */
  readonly connectionTimeoutMs?: number;
  /** @defaultValue 30000 */
  readonly requestTimeoutMs?: number;
  /** @defaultValue 3 */
  readonly maxAttempts?: number;
  readonly httpAgent?: HttpAgent;
  readonly httpsAgent?: HttpsAgent;
  /** Send `Expect: 100-continue` for bodies of 2 MiB and more (SDK default). @defaultValue true */
  readonly expectContinue?: boolean;
}

/** Creates an S3Client with the service's settings (see the file comment). */
export function createS3Client(settings: S3ClientSettings): S3Client {
  return new S3Client({
    endpoint: settings.endpoint,
    region: settings.region,
    forcePathStyle: settings.forcePathStyle,
    credentials: settings.credentials,
    maxAttempts: settings.maxAttempts ?? 3,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...(settings.expectContinue === false ? { expectContinueHeader: false } : {}),
    requestHandler: {
      connectionTimeout: settings.connectionTimeoutMs ?? 5_000,
      requestTimeout: settings.requestTimeoutMs ?? 30_000,
      httpAgent: settings.httpAgent,
      httpsAgent: settings.httpsAgent,
    },
  });
}

/** A customer's S3-compatible bucket settings (secret already decrypted). */
export interface CustomerS3Settings {
  readonly endpoint: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** @defaultValue 'us-east-1' (what most S3-compatible stores accept) */
  readonly region?: string;
}

/** A customer S3 client and how to release it. */
export interface CustomerS3Client {
  readonly client: S3Client;
  /** Releases the client; shared agents passed in by the caller are left open. */
  close(): void;
}

/**
 * Builds a client for a customer's endpoint. The endpoint is re-checked here (https, no
 * credentials, no private literal), and every connection the client opens is resolved, checked
 * and pinned by the guarded agents, so a name that resolves to 10.0.0.5 is refused at connect time.
 * Pass `agents` created once in services.ts to share keep-alive sockets across customers.
 */
export function createCustomerS3Client(
  customer: CustomerS3Settings,
  guard: { readonly policy: OutboundPolicy; readonly agents?: GuardedAgents },
): CustomerS3Client {
  const checked = checkUrl(customer.endpoint, {
    allowPrivateNetworks: guard.policy.allowPrivateNetworks,
    requireHttps: true,
  });
  if (!checked.ok) {
    if (checked.reason === 'private-address')
      throw new OutboundBlockedError(`S3 endpoint refused: ${checked.detail}`, { host: customer.endpoint });
    throw new AppError('INVALID_REQUEST', `endpoint_url ${checked.message}`);
  }
  const agents = guard.agents ?? createGuardedAgents(guard.policy);
  const client = createS3Client({
    endpoint: checked.url.origin,
    region: customer.region ?? 'us-east-1',
    // Path style works on every S3-compatible store and avoids TLS name mismatches for dotted buckets.
    forcePathStyle: true,
    credentials: { accessKeyId: customer.accessKeyId, secretAccessKey: customer.secretAccessKey },
    httpAgent: agents.httpAgent,
    httpsAgent: agents.httpsAgent,
    // With caller-supplied agents the SDK already uses them for 100-continue uploads; switching
    // the header off removes the code path where it would build a fresh, unguarded Agent.
    expectContinue: false,
  });
  return {
    client,
    close() {
      // S3Client.destroy() would destroy the agents too, cutting other customers' sockets.
      if (guard.agents === undefined) client.destroy();
    },
  };
}
