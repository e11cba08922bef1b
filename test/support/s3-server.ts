/**
 * A real S3-compatible server on loopback for tests, honest about authentication and integrity.
 *
 * s3rver stores objects and speaks the S3 REST API, but it does not verify SigV4 signatures and does
 * not decode the SDK's `aws-chunked` uploads (it would store the chunk framing as the object). So a
 * verifying front sits before it, on its own 127.0.0.1 port, and does what S3 does:
 *
 *   request ─▶ front: SigV4 (header or presigned query) ─▶ payload: sha256 / aws-chunked (signed
 *   chunks or unsigned + trailer) ─▶ x-amz-decoded-content-length, x-amz-checksum-* (header or
 *   trailer), Content-MD5 ─▶ plain request ─▶ s3rver (temp dir) ─▶ response passed back as is.
 *
 * Refusals are S3-style XML errors: InvalidAccessKeyId, SignatureDoesNotMatch, RequestTimeTooSkewed,
 * AccessDenied (expired presign), BadDigest, InvalidDigest, IncompleteBody, XAmzContentSHA256Mismatch.
 * s3rver's own answers (NoSuchBucket, NoSuchKey) pass through. Canonicalisation and key derivation
 * come from @smithy/signature-v4, the signer the SDK uses, so we check against the reference
 * algorithm rather than a second hand-written one; only the final HMAC and the chunk chain are ours.
 *
 * Limits: path-style addressing only; bodies are buffered (64 MiB cap); one credential pair;
 * `STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER` and other streaming modes answer 501 NotImplemented.
 */
import { createHash, createHmac, timingSafeEqual, type BinaryLike } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type ServerResponse,
} from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { SignatureV4, createScope, getCanonicalHeaders, getSigningKey } from '@smithy/signature-v4';

/** Options of startS3Server. */
export interface S3ServerOptions {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** Buckets created at start. */
  readonly buckets: readonly string[];
  /** @defaultValue 'us-east-1' */
  readonly region?: string;
}

/** What the front saw of one request, for assertions. */
export interface S3RequestRecord {
  readonly method: string;
  readonly path: string;
  readonly contentSha256?: string;
  readonly contentEncoding?: string;
  readonly trailer?: string;
  /** `x-amz-checksum-*` (and `content-md5`) values that were present and verified. */
  readonly verifiedChecksums?: readonly string[];
  readonly status: number;
  readonly errorCode?: string;
}

/** A running server. */
export interface S3Server {
  /** `http://127.0.0.1:PORT`: the verifying front. */
  readonly endpoint: string;
  readonly region: string;
  readonly requests: S3RequestRecord[];
  /** The bytes s3rver stored for an object (bypassing the front), or null. */
  readObject(bucket: string, key: string): Promise<Buffer | null>;
  stop(): Promise<void>;
}

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverConstructor = new (options: Record<string, unknown>) => S3rverInstance;
// s3rver ships no types; this is the slice of its API we use.
const S3rver = createRequire(import.meta.url)('s3rver') as S3rverConstructor;

const MAX_BODY_BYTES = 64 * 1024 * 1024;
const MAX_SKEW_MS = 15 * 60 * 1000;
const EMPTY_SHA256 = createHash('sha256').update('').digest('hex');

/** An S3 error answer. */
class S3Error extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** Starts s3rver on an ephemeral port and temp dir, behind a verifying front on another one. */
export async function startS3Server(options: S3ServerOptions): Promise<S3Server> {
  const region = options.region ?? 'us-east-1';
  const directory = await mkdtemp(join(tmpdir(), 'pressroom-s3-'));
  const backend = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: options.buckets.map((name) => ({ name })),
  });
  const backendPort = (await backend.run()).port;
  const requests: S3RequestRecord[] = [];
  const verifier = new SigV4Verifier(region, options);

  const front = createServer((req, res) => {
    handle(req, res, verifier, backendPort).then(
      (record) => requests.push(record),
      (error: unknown) => {
        if (!res.headersSent) res.writeHead(500).end(String(error));
        else res.destroy();
      },
    );
  });
  await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
  const port = (front.address() as AddressInfo).port;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    region,
    requests,
    readObject: (bucket, key) => readBackendObject(backendPort, bucket, key),
    async stop() {
      front.closeAllConnections();
      await new Promise<void>((resolve) => front.close(() => resolve()));
      await backend.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  verifier: SigV4Verifier,
  backendPort: number,
): Promise<S3RequestRecord> {
  const base = {
    method: req.method ?? 'GET',
    path: (req.url ?? '/').split('?')[0] ?? '/',
    contentSha256: header(req, 'x-amz-content-sha256'),
    contentEncoding: header(req, 'content-encoding'),
    trailer: header(req, 'x-amz-trailer'),
  };
  try {
    const raw = await readBody(req);
    const auth = await verifier.authenticate(req);
    const { body, verifiedChecksums } = decodePayload(req, raw, auth);
    if (verifyContentMd5(req, body)) verifiedChecksums.push('content-md5');
    const status = await forward(req, res, body, backendPort);
    return { ...base, verifiedChecksums, status };
  } catch (error) {
    if (!(error instanceof S3Error)) throw error;
    sendError(res, error, req.method === 'HEAD');
    return { ...base, status: error.status, errorCode: error.code };
  }
}

// ---------------------------------------------------------------- SigV4

interface Authenticated {
  readonly mode: 'header' | 'query';
  readonly longDate: string;
  readonly scope: string;
  readonly signingKey: Uint8Array;
  readonly signature: string;
}

/** Node's crypto in the shape @smithy/signature-v4 expects (a HashConstructor); tests sign with it too. */
type SourceData = string | ArrayBuffer | ArrayBufferView;
export class NodeSha256 {
  private readonly hash;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', toBinary(secret));
  }
  update(data: SourceData): void {
    this.hash.update(toBinary(data));
  }
  async digest(): Promise<Uint8Array> {
    return this.hash.digest();
  }
}

function toBinary(data: SourceData): BinaryLike {
  if (typeof data === 'string') return data;
  if (data instanceof ArrayBuffer) return Buffer.from(data);
  return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

type SignableRequest = Parameters<typeof getCanonicalHeaders>[0];

/** Recomputes SigV4 signatures with the library's canonicalisation and compares. */
class SigV4Verifier extends SignatureV4 {
  constructor(
    readonly region: string,
    private readonly credentials: { accessKeyId: string; secretAccessKey: string },
  ) {
    // S3 signs the path as sent (no second URI-encoding) and always carries a payload hash.
    super({ service: 's3', region, credentials, sha256: NodeSha256, uriEscapePath: false, applyChecksum: true });
  }

  async authenticate(req: IncomingMessage): Promise<Authenticated> {
    const query = parseQuery(req.url ?? '/');
    const authorization = header(req, 'authorization');
    const presigned = query['X-Amz-Algorithm'] !== undefined || query['X-Amz-Signature'] !== undefined;
    if (authorization !== undefined && presigned) {
      throw new S3Error(
        400,
        'InvalidArgument',
        'Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter or the Authorization header should be specified',
      );
    }
    if (authorization !== undefined) return this.verifyHeaderAuth(req, authorization, query);
    if (presigned) return this.verifyQueryAuth(req, query);
    throw new S3Error(403, 'AccessDenied', 'Access Denied (anonymous requests are not allowed)');
  }

  private async verifyHeaderAuth(req: IncomingMessage, authorization: string, query: Query): Promise<Authenticated> {
    const match = /^AWS4-HMAC-SHA256 Credential=([^,]+),\s*SignedHeaders=([^,]+),\s*Signature=([0-9a-f]{64})$/.exec(
      authorization.trim(),
    );
    if (!match) throw new S3Error(400, 'AuthorizationHeaderMalformed', 'The authorization header is malformed.');
    const [, credential = '', signedHeaders = '', signature = ''] = match;
    const longDate = header(req, 'x-amz-date') ?? '';
    const requestTime = parseAmzDate(longDate);
    if (requestTime === null)
      throw new S3Error(403, 'AccessDenied', 'AWS authentication requires a valid Date or x-amz-date header');
    const scope = this.checkCredential(credential, longDate);
    if (Math.abs(Date.now() - requestTime) > MAX_SKEW_MS) {
      throw new S3Error(
        403,
        'RequestTimeTooSkewed',
        'The difference between the request time and the current time is too large.',
        {
          RequestTime: longDate,
          ServerTime: new Date().toISOString(),
        },
      );
    }
    const payloadHash = header(req, 'x-amz-content-sha256');
    if (payloadHash === undefined)
      throw new S3Error(400, 'InvalidRequest', 'Missing required header for this request: x-amz-content-sha256');
    const signed = signedHeaderList(signedHeaders);
    const unsigned = Object.keys(req.headers).filter((name) => name.startsWith('x-amz-') && !signed.includes(name));
    if (unsigned.length > 0)
      throw new S3Error(403, 'AccessDenied', 'There were headers present in the request which were not signed', {
        HeadersNotSigned: unsigned.join(', '),
      });
    return this.check(req, query, signed, payloadHash, { mode: 'header', longDate, scope, signature });
  }

  private async verifyQueryAuth(req: IncomingMessage, query: Query): Promise<Authenticated> {
    const get = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : undefined);
    const [algorithm, credential, longDate, expires, signedHeaders, signature] = [
      'X-Amz-Algorithm',
      'X-Amz-Credential',
      'X-Amz-Date',
      'X-Amz-Expires',
      'X-Amz-SignedHeaders',
      'X-Amz-Signature',
    ].map(get);
    if (algorithm !== 'AWS4-HMAC-SHA256' || !credential || !longDate || !expires || !signedHeaders || !signature) {
      throw new S3Error(
        400,
        'AuthorizationQueryParametersError',
        'Query-string authentication version 4 requires the X-Amz-Algorithm, X-Amz-Credential, X-Amz-Signature, X-Amz-Date, X-Amz-SignedHeaders, and X-Amz-Expires parameters.',
      );
    }
    const signedAt = parseAmzDate(longDate);
    const lifetimeSeconds = /^\d+$/.test(expires) ? Number(expires) : NaN;
    if (signedAt === null || !(lifetimeSeconds >= 1 && lifetimeSeconds <= 604_800)) {
      throw new S3Error(
        400,
        'AuthorizationQueryParametersError',
        'X-Amz-Date must be yyyyMMddTHHmmssZ and X-Amz-Expires between 1 and 604800 seconds',
      );
    }
    const scope = this.checkCredential(credential, longDate);
    const auth = await this.check(
      req,
      query,
      signedHeaderList(signedHeaders),
      get('X-Amz-Content-Sha256') ?? 'UNSIGNED-PAYLOAD',
      {
        mode: 'query',
        longDate,
        scope,
        signature,
      },
    );
    // Expiry is checked after the signature, as S3 does: a tampered X-Amz-Expires is a bad signature.
    if (Date.now() > signedAt + lifetimeSeconds * 1000)
      throw new S3Error(403, 'AccessDenied', 'Request has expired', { 'X-Amz-Expires': expires });
    if (signedAt - Date.now() > MAX_SKEW_MS) throw new S3Error(403, 'AccessDenied', 'Request is not valid yet');
    return auth;
  }

  /** Validates `AKID/yyyymmdd/region/s3/aws4_request`; returns the scope. */
  private checkCredential(credential: string, longDate: string): string {
    const [accessKeyId, date, region, service, terminator, ...rest] = credential.split('/');
    if (accessKeyId !== this.credentials.accessKeyId) {
      throw new S3Error(
        403,
        'InvalidAccessKeyId',
        'The AWS Access Key Id you provided does not exist in our records.',
        { AWSAccessKeyId: accessKeyId ?? '' },
      );
    }
    if (rest.length > 0 || service !== 's3' || terminator !== 'aws4_request' || date !== longDate.slice(0, 8)) {
      throw new S3Error(
        400,
        'AuthorizationHeaderMalformed',
        `The authorization header is malformed; the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".`,
      );
    }
    if (region !== this.region) {
      throw new S3Error(
        400,
        'AuthorizationHeaderMalformed',
        `The authorization header is malformed; the region '${region}' is wrong; expecting '${this.region}'`,
        { Region: this.region },
      );
    }
    return createScope(date, region, 's3');
  }

  private async check(
    req: IncomingMessage,
    query: Query,
    signedHeaders: string[],
    payloadHash: string,
    claim: { mode: 'header' | 'query'; longDate: string; scope: string; signature: string },
  ): Promise<Authenticated> {
    const headers: Record<string, string> = {};
    for (const name of signedHeaders) headers[name] = header(req, name) ?? '';
    const request = {
      method: req.method ?? 'GET',
      protocol: 'http:',
      hostname: '',
      path: rawPath(req),
      query,
      headers,
    };
    // signableHeaders = exactly the client's list, so none is dropped as "unsignable".
    const canonicalHeaders = getCanonicalHeaders(
      request as unknown as SignableRequest,
      undefined,
      new Set(signedHeaders),
    );
    const canonicalRequest = this.createCanonicalRequest(
      request as unknown as SignableRequest,
      canonicalHeaders,
      payloadHash,
    );
    const stringToSign = await this.createStringToSign(
      claim.longDate,
      claim.scope,
      canonicalRequest,
      'AWS4-HMAC-SHA256',
    );
    const signingKey = await getSigningKey(NodeSha256, this.credentials, claim.longDate.slice(0, 8), this.region, 's3');
    const expected = hmacHex(signingKey, stringToSign);
    if (!hexEqual(expected, claim.signature)) {
      throw new S3Error(
        403,
        'SignatureDoesNotMatch',
        'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
        {
          AWSAccessKeyId: this.credentials.accessKeyId,
          StringToSign: stringToSign,
          CanonicalRequest: canonicalRequest,
        },
      );
    }
    return { ...claim, signingKey };
  }
}

// ---------------------------------------------------------------- payload

/** Turns the wire body into object bytes, verifying every integrity claim the request makes. */
function decodePayload(
  req: IncomingMessage,
  raw: Buffer,
  auth: Authenticated,
): { body: Buffer; verifiedChecksums: string[] } {
  const mode = auth.mode === 'query' ? 'UNSIGNED-PAYLOAD' : (header(req, 'x-amz-content-sha256') ?? '');
  let body: Buffer;
  let trailers = new Map<string, string>();
  if (mode === 'UNSIGNED-PAYLOAD') {
    body = raw;
  } else if (/^[0-9a-f]{64}$/.test(mode)) {
    if (sha256Hex(raw) !== mode)
      throw new S3Error(
        400,
        'XAmzContentSHA256Mismatch',
        "The provided 'x-amz-content-sha256' header does not match what was computed.",
      );
    body = raw;
  } else if (mode === 'STREAMING-UNSIGNED-PAYLOAD-TRAILER' || mode === 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD') {
    const signing = mode === 'STREAMING-AWS4-HMAC-SHA256-PAYLOAD' ? auth : undefined;
    ({ body, trailers } = decodeAwsChunked(raw, signing));
    const declared = header(req, 'x-amz-decoded-content-length');
    if (declared === undefined || Number(declared) !== body.length) {
      throw new S3Error(
        400,
        'IncompleteBody',
        `x-amz-decoded-content-length says ${declared ?? '(missing)'} bytes; the chunks held ${body.length}`,
      );
    }
    const announced = header(req, 'x-amz-trailer');
    if (announced !== undefined && !trailers.has(announced.toLowerCase())) {
      throw new S3Error(400, 'MalformedTrailerError', `The request announced trailer ${announced} but did not send it`);
    }
  } else {
    throw new S3Error(501, 'NotImplemented', `x-amz-content-sha256 mode ${mode} is not supported by this test server`);
  }
  return { body, verifiedChecksums: verifyChecksums(req, body, trailers) };
}

/**
 * Decodes `aws-chunked`: `<hex size>[;chunk-signature=<sig>]\r\n<data>\r\n` … a zero-size chunk,
 * then optional `name:value\r\n` trailer lines and a blank line. With `signing`, each chunk's
 * signature must chain from the previous one (the first from the request signature).
 */
function decodeAwsChunked(raw: Buffer, signing?: Authenticated): { body: Buffer; trailers: Map<string, string> } {
  const malformed = (why: string) => new S3Error(400, 'InvalidRequest', `Malformed aws-chunked body: ${why}`);
  const parts: Buffer[] = [];
  let previous = signing?.signature ?? '';
  let pos = 0;
  for (;;) {
    const lineEnd = raw.indexOf('\r\n', pos);
    if (lineEnd === -1) throw malformed('chunk header without CRLF');
    const [sizeHex = '', ...extensions] = raw.subarray(pos, lineEnd).toString('latin1').split(';');
    if (!/^[0-9a-fA-F]{1,8}$/.test(sizeHex)) throw malformed(`bad chunk size "${sizeHex}"`);
    const size = parseInt(sizeHex, 16);
    pos = lineEnd + 2;
    if (pos + size > raw.length) throw new S3Error(400, 'IncompleteBody', 'The body ended inside a chunk');
    const data = raw.subarray(pos, pos + size);
    pos += size;
    if (signing) {
      const given = extensions.find((e) => e.startsWith('chunk-signature='))?.slice('chunk-signature='.length) ?? '';
      const stringToSign = [
        'AWS4-HMAC-SHA256-PAYLOAD',
        signing.longDate,
        signing.scope,
        previous,
        EMPTY_SHA256,
        sha256Hex(data),
      ].join('\n');
      if (!hexEqual(hmacHex(signing.signingKey, stringToSign), given)) {
        throw new S3Error(
          403,
          'SignatureDoesNotMatch',
          'The chunk signature we calculated does not match the signature you provided.',
        );
      }
      previous = given;
    }
    if (size === 0) break;
    if (raw.toString('latin1', pos, pos + 2) !== '\r\n') throw malformed('chunk data not followed by CRLF');
    pos += 2;
    parts.push(data);
  }
  const trailers = new Map<string, string>();
  // The SDK ends with `0\r\n` alone when it sends no trailer; otherwise trailer lines, blank line.
  while (pos < raw.length) {
    const lineEnd = raw.indexOf('\r\n', pos);
    if (lineEnd === -1) throw malformed('trailer without CRLF');
    const line = raw.toString('latin1', pos, lineEnd);
    pos = lineEnd + 2;
    if (line === '') break;
    const colon = line.indexOf(':');
    if (colon <= 0) throw malformed(`bad trailer line "${line}"`);
    trailers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  if (pos !== raw.length) throw malformed('bytes after the final chunk');
  return { body: Buffer.concat(parts), trailers };
}

const CHECKSUMS: Record<string, (data: Buffer) => Buffer> = {
  crc32: (data) => uint32(crc32(data)),
  crc32c: (data) => uint32(crc32c(data)),
  crc64nvme: (data) => crc64nvme(data),
  sha1: (data) => createHash('sha1').update(data).digest(),
  sha256: (data) => createHash('sha256').update(data).digest(),
};

// `x-amz-checksum-*` headers that carry a setting, not a checksum value.
const CHECKSUM_SETTINGS = new Set(['x-amz-checksum-mode', 'x-amz-checksum-type', 'x-amz-checksum-algorithm']);

/** Checks every `x-amz-checksum-*` value, from headers and trailers alike; returns their names. */
function verifyChecksums(req: IncomingMessage, body: Buffer, trailers: Map<string, string>): string[] {
  const claims = new Map(trailers);
  for (const name of Object.keys(req.headers)) {
    if (name.startsWith('x-amz-checksum-') && !CHECKSUM_SETTINGS.has(name)) claims.set(name, header(req, name) ?? '');
  }
  for (const [name, value] of claims) {
    if (!name.startsWith('x-amz-checksum-')) continue;
    const algorithm = name.slice('x-amz-checksum-'.length);
    const compute = CHECKSUMS[algorithm];
    if (!compute) throw new S3Error(400, 'InvalidRequest', `Unsupported checksum algorithm ${algorithm}`);
    if (compute(body).toString('base64') !== value) {
      throw new S3Error(
        400,
        'BadDigest',
        `The ${algorithm.toUpperCase()} you specified did not match the calculated checksum.`,
      );
    }
  }
  return [...claims.keys()].filter((name) => name.startsWith('x-amz-checksum-'));
}

/** Verifies Content-MD5 when present; returns whether it was. */
function verifyContentMd5(req: IncomingMessage, body: Buffer): boolean {
  const md5 = header(req, 'content-md5');
  if (md5 === undefined) return false;
  if (!/^[A-Za-z0-9+/]{22}==$/.test(md5))
    throw new S3Error(400, 'InvalidDigest', 'The Content-MD5 you specified is not valid.');
  if (createHash('md5').update(body).digest('base64') !== md5) {
    throw new S3Error(400, 'BadDigest', 'The Content-MD5 you specified did not match what we received.');
  }
  return true;
}

// ---------------------------------------------------------------- forwarding to s3rver

const AUTH_QUERY = /^x-amz-(algorithm|credential|date|expires|signedheaders|signature|security-token|content-sha256)$/i;
const DROPPED_HEADERS = new Set([
  'host',
  'authorization',
  'connection',
  'keep-alive',
  'expect',
  'transfer-encoding',
  'content-length',
  'content-encoding',
  'x-amz-content-sha256',
  'x-amz-date',
  'x-amz-decoded-content-length',
  'x-amz-trailer',
  'x-amz-security-token',
]);

/** Sends the verified, decoded request to s3rver and streams its answer back. */
function forward(req: IncomingMessage, res: ServerResponse, body: Buffer, backendPort: number): Promise<number> {
  const headers: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(req.headers))
    if (!DROPPED_HEADERS.has(name) && value !== undefined) headers[name] = value;
  const encodings = (header(req, 'content-encoding') ?? '')
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '' && e !== 'aws-chunked');
  if (encodings.length > 0) headers['content-encoding'] = encodings.join(', ');
  const [path = '/', rawQuery = ''] = (req.url ?? '/').split(/\?(.*)/s);
  const kept: string[] = [];
  for (const pair of rawQuery.split('&').filter(Boolean)) {
    const name = safeDecode(pair.split('=')[0] ?? '');
    if (AUTH_QUERY.test(name)) continue;
    if (/^x-amz-/i.test(name))
      headers[name.toLowerCase()] = safeDecode(pair.slice(pair.indexOf('=') + 1)); // hoisted by a presigner
    else kept.push(pair);
  }
  Object.assign(headers, backendAuthHeaders(), { 'content-length': String(body.length) });
  return new Promise((resolve, reject) => {
    const upstream = httpRequest(
      {
        host: '127.0.0.1',
        port: backendPort,
        method: req.method,
        path: kept.length ? `${path}?${kept.join('&')}` : path,
        headers,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
        answer.on('end', () => resolve(answer.statusCode ?? 502));
        answer.on('error', reject);
      },
    );
    upstream.on('error', reject);
    upstream.end(body);
  });
}

/** s3rver accepts any SigV4 header from its built-in S3RVER key (it never checks the signature). */
function backendAuthHeaders(): Record<string, string> {
  const longDate = new Date().toISOString().replace(/[-:]|\.\d{3}/g, '');
  return {
    authorization: `AWS4-HMAC-SHA256 Credential=S3RVER/${longDate.slice(0, 8)}/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=${'0'.repeat(64)}`,
    'x-amz-date': longDate,
    'x-amz-content-sha256': 'UNSIGNED-PAYLOAD',
  };
}

async function readBackendObject(backendPort: number, bucket: string, key: string): Promise<Buffer | null> {
  const path = `/${encodeURIComponent(bucket)}/${key.split('/').map(encodeURIComponent).join('/')}`;
  return new Promise((resolve, reject) => {
    httpRequest({ host: '127.0.0.1', port: backendPort, path, headers: backendAuthHeaders() }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (chunk: Buffer) => chunks.push(chunk));
      answer.on('end', () => resolve(answer.statusCode === 200 ? Buffer.concat(chunks) : null));
      answer.on('error', reject);
    })
      .on('error', reject)
      .end();
  });
}

// ---------------------------------------------------------------- helpers

type Query = Record<string, string | string[]>;

function parseQuery(url: string): Query {
  const query: Query = {};
  const raw = url.includes('?') ? url.slice(url.indexOf('?') + 1) : '';
  for (const pair of raw.split('&').filter(Boolean)) {
    const eq = pair.indexOf('=');
    // S3 clients encode spaces as %20; a literal "+" is a plus, so no form-decoding here.
    const name = safeDecode(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? '' : safeDecode(pair.slice(eq + 1));
    const existing = query[name];
    query[name] = existing === undefined ? value : ([] as string[]).concat(existing, value);
  }
  return query;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new S3Error(400, 'InvalidArgument', 'Malformed percent-encoding in the request URI');
  }
}

function rawPath(req: IncomingMessage): string {
  return (req.url ?? '/').split('?')[0] || '/';
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

function signedHeaderList(list: string): string[] {
  return list
    .split(';')
    .map((h) => h.trim().toLowerCase())
    .filter(Boolean);
}

function parseAmzDate(value: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  return m ? Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!) : null;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES)
        reject(new S3Error(400, 'EntityTooLarge', 'Your proposed upload exceeds the test server limit'));
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function sendError(res: ServerResponse, error: S3Error, headOnly: boolean): void {
  const escapeXml = (s: string) => s.replace(/[<>&'"]/g, (c) => `&#${c.charCodeAt(0)};`);
  const extra = Object.entries(error.extra)
    .map(([k, v]) => `<${k}>${escapeXml(v)}</${k}>`)
    .join('');
  const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${error.code}</Code><Message>${escapeXml(error.message)}</Message>${extra}<RequestId>pressroom-test</RequestId></Error>`;
  res.writeHead(error.status, {
    'content-type': 'application/xml',
    'content-length': headOnly ? 0 : Buffer.byteLength(xml),
  });
  res.end(headOnly ? undefined : xml);
}

function sha256Hex(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

function hmacHex(key: Uint8Array, data: string): string {
  return createHmac('sha256', key).update(data).digest('hex');
}

function hexEqual(a: string, b: string): boolean {
  return a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));
}

function uint32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value >>> 0);
  return out;
}

const CRC32C_TABLE = buildTable32(0x82f63b78);

/** CRC-32C (Castagnoli), reflected; node:zlib only has plain CRC-32. */
export function crc32c(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) crc = (CRC32C_TABLE[(crc ^ byte) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function buildTable32(poly: number): Uint32Array {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i += 1) {
    let c = i;
    for (let k = 0; k < 8; k += 1) c = c & 1 ? poly ^ (c >>> 1) : c >>> 1;
    table[i] = c >>> 0;
  }
  return table;
}

const CRC64_POLY = 0x9a6c9329ac4bc9b5n;
const MASK64 = 0xffffffffffffffffn;
const CRC64_TABLE = Array.from({ length: 256 }, (_, i) => {
  let c = BigInt(i);
  for (let k = 0; k < 8; k += 1) c = c & 1n ? CRC64_POLY ^ (c >> 1n) : c >> 1n;
  return c;
});

/** CRC-64/NVME (the SDK's CRC64NVME), reflected, 8 bytes big-endian. */
export function crc64nvme(data: Buffer): Buffer {
  let crc = MASK64;
  for (const byte of data) crc = (CRC64_TABLE[Number((crc ^ BigInt(byte)) & 0xffn)] as bigint) ^ (crc >> 8n);
  const out = Buffer.alloc(8);
  out.writeBigUInt64BE((crc ^ MASK64) & MASK64);
  return out;
}
