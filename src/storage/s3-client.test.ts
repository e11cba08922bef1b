/**
 * Customer S3 endpoints go through the outbound guard at connection time. The verifying S3 server
 * runs on loopback, so "blocked" means its request log stays empty and "allowed" means a real,
 * signature-checked round trip.
 */
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startS3Server, type S3Server } from '../../test/support/s3-server.js';
import { createGuardedAgents } from '../net/guarded-agents.js';
import { findOutboundBlockedError, OutboundBlockedError } from '../net/outbound-blocked-error.js';
import type { OutboundPolicy, ResolveHost } from '../net/resolve-checked-address.js';
import { isAppError } from '../shared/errors.js';
import { createCustomerS3Client, createS3Client } from './s3-client.js';

const credentials = { accessKeyId: 'AKIACUSTOMERBUCKET01', secretAccessKey: 'customer-secret-0123456789abcdefghij' };
const bucket = 'customer-bucket';
/** The customer's endpoint name "resolves" to the loopback S3 server. */
const resolveToLoopback: ResolveHost = async () => [{ address: '127.0.0.1', family: 4 }];
let server: S3Server;
let port: string;

beforeAll(async () => {
  server = await startS3Server({ ...credentials, buckets: [bucket] });
  port = new URL(server.endpoint).port;
});
afterAll(async () => {
  await server?.stop();
});
beforeEach(() => {
  server.requests.length = 0;
});

async function failure(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: unknown) => error,
  );
}

describe('createCustomerS3Client', () => {
  it('refuses endpoints that are unusable on their face before any connection', () => {
    const policy: OutboundPolicy = { allowPrivateNetworks: false };
    expect(() => createCustomerS3Client({ ...credentials, endpoint: 'https://127.0.0.1:9000' }, { policy })).toThrow(
      OutboundBlockedError,
    );
    expect(() => createCustomerS3Client({ ...credentials, endpoint: 'https://[::ffff:a00:1]' }, { policy })).toThrow(
      OutboundBlockedError,
    );
    const insecure = () =>
      createCustomerS3Client({ ...credentials, endpoint: 'http://s3.customer.example' }, { policy });
    expect(insecure).toThrow(/https/);
    try {
      insecure();
    } catch (error) {
      expect(isAppError(error, 'INVALID_REQUEST')).toBe(true);
    }
  });

  it('refuses, at connection time, an endpoint name that resolves to a private address', async () => {
    const { client, close } = createCustomerS3Client(
      { ...credentials, endpoint: `https://s3.customer.example:${port}` },
      { policy: { allowPrivateNetworks: false, resolve: resolveToLoopback } },
    );
    try {
      for (const body of [Buffer.from('small'), Buffer.alloc(3 * 1024 * 1024, 1)]) {
        const error = await failure(
          client.send(new PutObjectCommand({ Bucket: bucket, Key: 'blocked.pdf', Body: body })),
        );
        expect(findOutboundBlockedError(error)?.reason).toMatch(
          /s3\.customer\.example resolved to 127\.0\.0\.1 is loopback/,
        );
      }
      expect(server.requests).toEqual([]);
    } finally {
      close();
    }
  });

  it('reaches the endpoint when private networks are allowed, with SigV4 checked by the server', async () => {
    const { client, close } = createCustomerS3Client(
      { ...credentials, endpoint: `http://s3.customer.example:${port}` },
      { policy: { allowPrivateNetworks: true, resolve: resolveToLoopback } },
    );
    try {
      await client.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: 'reports/ok.pdf',
          Body: Buffer.from('%PDF-1.7'),
          ContentType: 'application/pdf',
        }),
      );
      const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: 'reports/ok.pdf' }));
      expect(await got.Body!.transformToString()).toBe('%PDF-1.7');
      expect(server.requests.map((r) => r.status)).toEqual([200, 200]);
    } finally {
      close();
    }
  });

  it('leaves shared agents open on close', async () => {
    const agents = createGuardedAgents({ allowPrivateNetworks: true, resolve: resolveToLoopback });
    const first = createCustomerS3Client(
      { ...credentials, endpoint: `http://s3.customer.example:${port}` },
      { policy: { allowPrivateNetworks: true }, agents },
    );
    await first.client.send(new PutObjectCommand({ Bucket: bucket, Key: 'shared/1.pdf', Body: Buffer.from('1') }));
    first.close();
    const second = createCustomerS3Client(
      { ...credentials, endpoint: `http://s3.customer.example:${port}` },
      { policy: { allowPrivateNetworks: true }, agents },
    );
    await second.client.send(new PutObjectCommand({ Bucket: bucket, Key: 'shared/2.pdf', Body: Buffer.from('2') }));
    second.close();
    agents.destroy();
    expect(await server.readObject(bucket, 'shared/2.pdf')).toEqual(Buffer.from('2'));
  });
});

describe('guarded agents inside the AWS SDK', () => {
  // The SDK builds a fresh, unguarded Agent for `Expect: 100-continue` uploads unless the agents
  // were passed in as instances. This pins that behaviour: if an SDK update changes it, this fails.
  it('still guard uploads that use Expect: 100-continue', async () => {
    const agents = createGuardedAgents({ allowPrivateNetworks: false, resolve: resolveToLoopback });
    const client = createS3Client({
      endpoint: `http://s3.customer.example:${port}`,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials,
      httpAgent: agents.httpAgent,
      httpsAgent: agents.httpsAgent,
    });
    try {
      const error = await failure(
        client.send(new PutObjectCommand({ Bucket: bucket, Key: 'big.pdf', Body: Buffer.alloc(3 * 1024 * 1024, 2) })),
      );
      expect(findOutboundBlockedError(error)).toBeDefined();
      expect(server.requests).toEqual([]);
    } finally {
      client.destroy();
    }
  });
});
