/**
 * Customer S3 storage: one configuration per account (secret encrypted at rest, never returned or
 * logged), a real connection test, and uploads of generated PDFs to the customer's own bucket.
 * Every connection goes through the outbound guard: the endpoint is checked at save, and each
 * connection is resolved, checked and pinned at test and upload time (DNS rebinding included).
 */
import { DeleteObjectCommand, HeadBucketCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { Db } from '../db/database.js';
import type { CustomerStorage } from '../files/delivery.js';
import { checkUrl } from '../net/check-url.js';
import type { GuardedAgents } from '../net/guarded-agents.js';
import { findOutboundBlockedError } from '../net/outbound-blocked-error.js';
import { putS3Object } from '../storage/s3-put.js';
import { createCustomerS3Client, type CustomerS3Settings } from '../storage/s3-client.js';
import { decryptSecret, deriveKey, encryptSecret } from '../shared/crypto.js';
import { AppError, DetailError, ValidationError } from '../shared/errors.js';
import { randomId } from '../shared/ids.js';
import type { Logger } from '../shared/log.js';
import { describeS3Failure } from './s3-errors.js';
import * as store from './s3-integration-store.js';

export interface S3SettingsInput {
  endpoint_url: string;
  access_key_id: string;
  secret_access_key?: string | null;
  bucket_name: string;
  default_prefix?: string | null;
}

export interface S3SettingsView {
  configured: true;
  endpoint_url: string;
  access_key_id: string;
  secret_access_key_masked: string;
  bucket_name: string;
  default_prefix: string;
}

export interface S3IntegrationService extends CustomerStorage {
  get(accountId: string): Promise<S3SettingsView>;
  save(accountId: string, input: S3SettingsInput): Promise<void>;
  remove(accountId: string): Promise<void>;
  /** Bucket reachable, then a small object written and removed. Throws DetailError naming the failed step. */
  test(accountId: string): Promise<string>;
}

/** First 4 + … + last 4: enough to recognise a key, never enough to use it. */
export function maskSecret(secret: string): string {
  return `${secret.slice(0, 4)}…${secret.slice(-4)}`;
}

/** A key prefix or path may not climb out of the bucket's prefix. */
export function checkKeyPath(path: string, loc: (string | number)[]): void {
  const segments = path.split('/');
  if (path.startsWith('/') || path.includes('\\') || segments.some((s) => s === '..' || s === '.')) {
    throw new ValidationError([
      {
        loc,
        msg: 'Path should be relative, without "..", "." segments, a leading "/" or backslashes',
        type: 'value_error',
      },
    ]);
  }
}

function objectKey(prefix: string, filename: string): string {
  const clean = prefix.replace(/\/+$/, '').replace(/\/{2,}/g, '/');
  return clean ? `${clean}/${filename}` : filename;
}

export function createS3IntegrationService(deps: {
  db: Db;
  secretKey: string;
  allowPrivateNetworks: boolean;
  agents: GuardedAgents;
  logger: Logger;
}): S3IntegrationService {
  const { db, logger } = deps;
  const sealKey = deriveKey(deps.secretKey, 's3-secrets');
  const policy = { allowPrivateNetworks: deps.allowPrivateNetworks };

  async function settingsOf(
    accountId: string,
  ): Promise<(CustomerS3Settings & { bucket: string; prefix: string }) | null> {
    const row = await store.findIntegration(db, accountId);
    if (!row) return null;
    return {
      endpoint: row.endpoint_url,
      accessKeyId: row.access_key_id,
      secretAccessKey: decryptSecret(sealKey, row.secret_access_key_sealed),
      bucket: row.bucket_name,
      prefix: row.default_prefix,
    };
  }

  function clientFor(settings: CustomerS3Settings) {
    return createCustomerS3Client(settings, { policy, agents: deps.agents });
  }

  return {
    async get(accountId) {
      const row = await store.findIntegration(db, accountId);
      if (!row) throw new AppError('S3_NOT_CONFIGURED', 'S3 storage is not configured for this account.');
      return {
        configured: true,
        endpoint_url: row.endpoint_url,
        access_key_id: row.access_key_id,
        secret_access_key_masked: maskSecret(decryptSecret(sealKey, row.secret_access_key_sealed)),
        bucket_name: row.bucket_name,
        default_prefix: row.default_prefix,
      };
    },

    async save(accountId, input) {
      const checked = checkUrl(input.endpoint_url, {
        allowPrivateNetworks: deps.allowPrivateNetworks,
        requireHttps: true,
      });
      if (!checked.ok) {
        logger.info({ reason: checked.reason, detail: checked.detail }, 'S3 endpoint refused at save');
        throw new ValidationError([
          { loc: ['body', 'endpoint_url'], msg: `endpoint_url ${checked.message}`, type: 'value_error' },
        ]);
      }
      const prefix = (input.default_prefix ?? '').replace(/\/+$/, '');
      if (prefix) checkKeyPath(prefix, ['body', 'default_prefix']);
      const existing = await store.findIntegration(db, accountId);
      if (!existing && !input.secret_access_key) {
        throw new DetailError('secret_access_key is required for a new S3 configuration.');
      }
      const now = Date.now();
      await store.upsertIntegration(db, {
        account_id: accountId,
        endpoint_url: input.endpoint_url,
        access_key_id: input.access_key_id,
        secret_access_key_sealed: input.secret_access_key
          ? encryptSecret(sealKey, input.secret_access_key)
          : existing!.secret_access_key_sealed,
        bucket_name: input.bucket_name,
        default_prefix: prefix,
        created_at: existing?.created_at ?? now,
        updated_at: now,
      });
    },

    async remove(accountId) {
      await store.deleteIntegration(db, accountId);
    },

    async test(accountId) {
      const settings = await settingsOf(accountId);
      if (!settings)
        throw new DetailError('S3 is not configured: save a configuration with POST /v1/integrations/s3 first.');
      const { client, close } = (() => {
        try {
          return clientFor(settings);
        } catch (error) {
          throw new DetailError(describeS3Failure(error, 'connect', settings.bucket));
        }
      })();
      try {
        try {
          await client.send(new HeadBucketCommand({ Bucket: settings.bucket }));
        } catch (error) {
          logger.info({ err: findOutboundBlockedError(error) ?? error }, 'S3 test: bucket check failed');
          throw new DetailError(describeS3Failure(error, 'bucket', settings.bucket));
        }
        const key = objectKey(settings.prefix, `.pressroom-connection-test-${randomId(12)}.txt`);
        try {
          await client.send(
            new PutObjectCommand({
              Bucket: settings.bucket,
              Key: key,
              Body: 'Pressroom connection test; safe to delete.\n',
              ContentType: 'text/plain',
            }),
          );
        } catch (error) {
          logger.info({ err: error }, 'S3 test: write failed');
          throw new DetailError(describeS3Failure(error, 'write', settings.bucket));
        }
        await client.send(new DeleteObjectCommand({ Bucket: settings.bucket, Key: key })).catch((error) => {
          logger.warn({ err: error }, 'S3 test: could not remove the test object');
        });
        return `Connected to bucket ${settings.bucket}: it is reachable and a test object was written and removed.`;
      } finally {
        close();
      }
    },

    async resolveTarget(accountId, target) {
      const row = await store.findIntegration(db, accountId);
      if (!row)
        throw new AppError(
          'INVALID_REQUEST',
          'store_s3 needs an S3 configuration; save one with POST /v1/integrations/s3.',
        );
      const path = target.filepath ?? row.default_prefix;
      if (path) checkKeyPath(path, ['body', 's3_filepath']);
      return { bucket: target.bucket ?? row.bucket_name, key: objectKey(path, target.filename) };
    },

    async upload(accountId, target, pdf, contentType = 'application/pdf') {
      const settings = await settingsOf(accountId);
      if (!settings) throw new AppError('S3_UPLOAD_FAILED', 'The S3 configuration was removed before the upload.');
      let handle: ReturnType<typeof clientFor>;
      try {
        handle = clientFor(settings);
      } catch (error) {
        throw new AppError(
          'S3_UPLOAD_FAILED',
          `Upload to S3 failed: ${describeS3Failure(error, 'connect', target.bucket)}`,
          { cause: error },
        );
      }
      try {
        await putS3Object(handle.client, { Bucket: target.bucket, Key: target.key, ContentType: contentType }, pdf);
      } catch (error) {
        throw new AppError(
          'S3_UPLOAD_FAILED',
          `Upload to S3 failed: ${describeS3Failure(error, 'write', target.bucket)}`,
          { cause: error },
        );
      } finally {
        handle.close();
      }
    },
  };
}
