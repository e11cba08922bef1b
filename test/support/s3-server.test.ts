/**
 * The test S3 server must be as strict as S3 where our code could go wrong: signatures, presigned
 * URLs, aws-chunked uploads and checksums. Clients here use the SDK's DEFAULT checksum settings
 * (CRC32 on every upload, aws-chunked trailers for streams) unless a test says otherwise.
 */
import { createHash, createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { Readable, Transform } from 'node:stream';
import { GetObjectCommand, PutObjectCommand, S3Client, type S3ClientConfig } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { SignatureV4 } from '@smithy/signature-v4';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { crc32c, crc64nvme, NodeSha256, startS3Server, type S3Server } from './s3-server.js';

const credentials = { accessKeyId: 'AKIAPRESSROOMTEST001', secretAccessKey: 'pressroom-test-secret-0123456789abcdef' };
const bucket = 'pressroom-test';
let server: S3Server;

beforeAll(async () => {
  server = await startS3Server({ ...credentials, buckets: [bucket] });
});
afterAll(async () => {
  await server?.stop();
});

function client(overrides: Partial<S3ClientConfig> = {}): S3Client {
  return new S3Client({
    endpoint: server.endpoint,
    region: server.region,
    forcePathStyle: true,
    credentials,
    maxAttempts: 1,
    ...overrides,
  });
}

async function getBytes(s3: S3Client, key: string): Promise<Buffer> {
  const result = await s3.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return Buffer.from(await result.Body!.transformToByteArray());
}

async function errorOf(promise: Promise<unknown>): Promise<{ name: string; status?: number }> {
  const error = (await promise.then(
    () => {
      throw new Error('expected the request to fail');
    },
    (e: unknown) => e,
  )) as { name: string; $metadata?: { httpStatusCode?: number } };
  return { name: error.name, status: error.$metadata?.httpStatusCode };
}

const payload = Buffer.from(Array.from({ length: 70_000 }, (_, i) => (i * 31) % 251));

describe('startS3Server: authentication', () => {
  it('round-trips an object with the right credentials', async () => {
    const s3 = client();
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'a/plain.bin', Body: payload, ContentType: 'application/pdf' }),
    );
    // SDK defaults: a CRC32 header on every upload, and the server checked it.
    expect(server.requests.findLast((r) => r.method === 'PUT')?.verifiedChecksums).toEqual(['x-amz-checksum-crc32']);
    expect((await getBytes(s3, 'a/plain.bin')).equals(payload)).toBe(true);
    expect((await server.readObject(bucket, 'a/plain.bin'))?.equals(payload)).toBe(true);
    s3.destroy();
  });

  it('refuses a wrong secret with SignatureDoesNotMatch, and stores nothing', async () => {
    const s3 = client({ credentials: { ...credentials, secretAccessKey: 'not-the-secret-0123456789abcdef' } });
    expect(
      await errorOf(s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'a/forged.bin', Body: payload }))),
    ).toEqual({
      name: 'SignatureDoesNotMatch',
      status: 403,
    });
    expect(await server.readObject(bucket, 'a/forged.bin')).toBeNull();
    s3.destroy();
  });

  it('refuses an unknown access key with InvalidAccessKeyId', async () => {
    const s3 = client({ credentials: { ...credentials, accessKeyId: 'AKIAUNKNOWNKEY000001' } });
    expect(await errorOf(getBytes(s3, 'a/plain.bin'))).toEqual({ name: 'InvalidAccessKeyId', status: 403 });
    s3.destroy();
  });

  it('refuses a request signed with a skewed clock', async () => {
    const s3 = client({ systemClockOffset: -20 * 60 * 1000 });
    expect(await errorOf(getBytes(s3, 'a/plain.bin'))).toEqual({ name: 'RequestTimeTooSkewed', status: 403 });
    s3.destroy();
  });

  it('passes NoSuchBucket through from s3rver', async () => {
    const s3 = client();
    expect(await errorOf(s3.send(new GetObjectCommand({ Bucket: 'no-such-bucket', Key: 'x' })))).toEqual({
      name: 'NoSuchBucket',
      status: 404,
    });
    s3.destroy();
  });
});

describe('startS3Server: presigned URLs', () => {
  it('serves a presigned GET, with the overridden Content-Disposition', async () => {
    const s3 = client();
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'p/doc.pdf', Body: payload, ContentType: 'application/pdf' }),
    );
    const url = await getSignedUrl(
      s3,
      new GetObjectCommand({
        Bucket: bucket,
        Key: 'p/doc.pdf',
        ResponseContentDisposition: 'attachment; filename="doc.pdf"',
      }),
      {
        expiresIn: 60,
      },
    );
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/pdf');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="doc.pdf"');
    expect(Buffer.from(await res.arrayBuffer()).equals(payload)).toBe(true);

    // The signature's first hex digit changed to another one (replacing it with a fixed '0' changed
    // nothing one time in sixteen, and the "tampered" link was then rightly served).
    const otherSignature = url.replace(
      /X-Amz-Signature=([0-9a-f])/,
      (_all, digit: string) => `X-Amz-Signature=${digit === '0' ? '1' : '0'}`,
    );
    for (const tampered of [
      url.replace('p/doc.pdf', 'a/plain.bin'),
      url.replace('X-Amz-Expires=60', 'X-Amz-Expires=600'),
      otherSignature,
    ]) {
      expect(tampered).not.toBe(url);
      const refused = await fetch(tampered);
      expect(refused.status).toBe(403);
      expect(await refused.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
    }
    s3.destroy();
  });

  it('refuses a presigned GET after it expires', async () => {
    const s3 = client();
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() - 10 * 60 * 1000);
    const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket: bucket, Key: 'a/plain.bin' }), {
      expiresIn: 60,
    }).finally(() => vi.useRealTimers());
    const res = await fetch(url);
    expect(res.status).toBe(403);
    expect(await res.text()).toMatch(/<Code>AccessDenied<\/Code><Message>Request has expired/);
    s3.destroy();
  });
});

/** Rewrites the CRC32 trailer of an aws-chunked body (same length, wrong value). */
function corruptTrailer(): Transform {
  const chunks: Buffer[] = [];
  return new Transform({
    transform(chunk: Buffer | string, _encoding, done) {
      chunks.push(Buffer.from(chunk));
      done();
    },
    flush(done) {
      const text = Buffer.concat(chunks).toString('latin1');
      expect(text).toMatch(/x-amz-checksum-crc32:[A-Za-z0-9+/=]{8}\r\n/);
      done(
        null,
        Buffer.from(text.replace(/x-amz-checksum-crc32:[A-Za-z0-9+/=]{8}/, 'x-amz-checksum-crc32:AAAAAA=='), 'latin1'),
      );
    },
  });
}

describe('startS3Server: integrity', () => {
  it('decodes an aws-chunked streaming upload with a CRC32 trailer (SDK defaults)', async () => {
    const s3 = client();
    const body = Readable.from([payload.subarray(0, 30_000), payload.subarray(30_000)]);
    await s3.send(
      new PutObjectCommand({ Bucket: bucket, Key: 'c/streamed.bin', Body: body, ContentLength: payload.length }),
    );
    const seen = server.requests.findLast((r) => r.path === `/${bucket}/c/streamed.bin`);
    expect(seen).toMatchObject({
      contentSha256: 'STREAMING-UNSIGNED-PAYLOAD-TRAILER',
      trailer: 'x-amz-checksum-crc32',
      verifiedChecksums: ['x-amz-checksum-crc32'],
      status: 200,
    });
    expect(seen?.contentEncoding).toContain('aws-chunked');
    expect((await server.readObject(bucket, 'c/streamed.bin'))?.equals(payload)).toBe(true);
    s3.destroy();
  });

  it('rejects an aws-chunked upload whose trailer checksum is wrong, and stores nothing', async () => {
    const s3 = client();
    s3.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { body?: unknown };
        if (request.body instanceof Readable) request.body = request.body.pipe(corruptTrailer());
        return next(args);
      },
      { step: 'finalizeRequest', name: 'corruptTrailer', priority: 'low' },
    );
    const body = Readable.from([payload]);
    expect(
      await errorOf(
        s3.send(
          new PutObjectCommand({ Bucket: bucket, Key: 'c/corrupt.bin', Body: body, ContentLength: payload.length }),
        ),
      ),
    ).toEqual({
      name: 'BadDigest',
      status: 400,
    });
    expect(await server.readObject(bucket, 'c/corrupt.bin')).toBeNull();
    s3.destroy();
  });

  it.each(['CRC32', 'CRC32C', 'SHA1', 'SHA256', 'CRC64NVME'] as const)(
    'verifies a %s checksum the SDK computed',
    async (algorithm) => {
      const s3 = client();
      await s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: `c/${algorithm}.bin`,
          Body: payload,
          ChecksumAlgorithm: algorithm,
        }),
      );
      await s3.send(
        new PutObjectCommand({
          Bucket: bucket,
          Key: `c/${algorithm}-stream.bin`,
          Body: Readable.from([payload]),
          ContentLength: payload.length,
          ChecksumAlgorithm: algorithm,
        }),
      );
      expect((await server.readObject(bucket, `c/${algorithm}-stream.bin`))?.equals(payload)).toBe(true);
      s3.destroy();
    },
  );

  it('rejects a wrong checksum header and a wrong Content-MD5 with BadDigest', async () => {
    const s3 = client();
    const wrongCrc = new PutObjectCommand({
      Bucket: bucket,
      Key: 'c/bad-header.bin',
      Body: payload,
      ChecksumCRC32: 'AAAAAA==',
    });
    expect(await errorOf(s3.send(wrongCrc))).toEqual({ name: 'BadDigest', status: 400 });
    const md5 = createHash('md5').update(payload).digest('base64');
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: 'c/md5.bin', Body: payload, ContentMD5: md5 }));
    const wrongMd5 = new PutObjectCommand({
      Bucket: bucket,
      Key: 'c/bad-md5.bin',
      Body: payload,
      ContentMD5: createHash('md5').update('x').digest('base64'),
    });
    expect(await errorOf(s3.send(wrongMd5))).toEqual({ name: 'BadDigest', status: 400 });
    expect(await server.readObject(bucket, 'c/bad-header.bin')).toBeNull();
    s3.destroy();
  });

  it('decodes a STREAMING-AWS4-HMAC-SHA256-PAYLOAD upload and rejects a forged chunk', async () => {
    const good = await signedStreamingPut('c/signed-stream.bin', [
      payload.subarray(0, 65_536),
      payload.subarray(65_536),
    ]);
    expect(good.status).toBe(200);
    expect((await server.readObject(bucket, 'c/signed-stream.bin'))?.equals(payload)).toBe(true);

    const forged = await signedStreamingPut(
      'c/forged-stream.bin',
      [payload.subarray(0, 65_536), payload.subarray(65_536)],
      { tamperSecondChunk: true },
    );
    expect(forged.status).toBe(403);
    expect(forged.body).toContain('<Code>SignatureDoesNotMatch</Code>');
    expect(await server.readObject(bucket, 'c/forged-stream.bin')).toBeNull();
  });

  it('computes CRC-32C and CRC-64/NVME check values correctly', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc64nvme(Buffer.from('123456789')).toString('hex')).toBe('ae8b14860a799888');
  });
});

/**
 * A hand-built signed streaming upload (the SDK does not produce this mode): headers signed by the
 * reference signer, chunk signatures chained here with plain node:crypto, as the S3 docs describe.
 */
async function signedStreamingPut(
  key: string,
  chunks: Buffer[],
  opts: { tamperSecondChunk?: boolean } = {},
): Promise<{ status: number; body: string }> {
  const url = new URL(`${server.endpoint}/${bucket}/${key}`);
  const decodedLength = chunks.reduce((n, c) => n + c.length, 0);
  const signer = new SignatureV4({
    service: 's3',
    region: server.region,
    credentials,
    sha256: NodeSha256,
    uriEscapePath: false,
  });
  const signingDate = new Date();
  const signed = await signer.sign(
    {
      method: 'PUT',
      protocol: 'http:',
      hostname: url.hostname,
      port: Number(url.port),
      path: url.pathname,
      query: {},
      headers: {
        host: url.host,
        'content-encoding': 'aws-chunked',
        'content-type': 'application/octet-stream',
        'x-amz-content-sha256': 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD',
        'x-amz-decoded-content-length': String(decodedLength),
      },
    },
    { signingDate },
  );
  const longDate = signed.headers['x-amz-date']!;
  const scope = `${longDate.slice(0, 8)}/${server.region}/s3/aws4_request`;
  const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();
  const signingKey = ['s3', 'aws4_request'].reduce(
    (k, part) => hmac(k, part),
    hmac(hmac(`AWS4${credentials.secretAccessKey}`, longDate.slice(0, 8)), server.region),
  );
  const sha = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
  let previous = /Signature=([0-9a-f]{64})/.exec(signed.headers.authorization!)![1]!;
  const framed: Buffer[] = [];
  for (const [index, data] of [...chunks, Buffer.alloc(0)].entries()) {
    const signature = hmac(
      signingKey,
      ['AWS4-HMAC-SHA256-PAYLOAD', longDate, scope, previous, sha(''), sha(data)].join('\n'),
    ).toString('hex');
    const sent = opts.tamperSecondChunk && index === 1 ? Buffer.from(data).fill(0x41, 0, 1) : data;
    framed.push(Buffer.from(`${data.length.toString(16)};chunk-signature=${signature}\r\n`), sent, Buffer.from('\r\n'));
    previous = signature;
  }
  const body = Buffer.concat(framed);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: 'PUT', headers: { ...signed.headers, 'content-length': String(body.length) } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
