/**
 * Oversized request bodies get a 413 that every client can read, whatever the route and the content
 * type, and per-route limits: generation routes 10 MiB, template create/update 4 MiB, the rest 64 KiB.
 * Real 10 MB-class bodies against the default limits, sent with Node's http.request and a
 * Content-Length, four at once. One dialect: the database plays no part in reading a body.
 */
import http, { type IncomingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../../support/test-app.js';

const MiB = 1024 * 1024;

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: any;
}

interface Upload {
  method: string;
  path: string;
  body: Buffer;
  contentType?: string;
  /** Send without Content-Length (Transfer-Encoding: chunked). */
  chunked?: boolean;
  /**
   * Keep the socket paused until the whole body has been handed to the kernel, then read: what
   * Python's http.client does (send everything, then read the answer). A server that closes before it
   * has read the body fails such a client every time rather than when the timing is unlucky.
   */
  readAfterSending?: boolean;
}

function writeChunked(req: http.ClientRequest, body: Buffer, done: () => void): void {
  const step = 64 * 1024;
  let offset = 0;
  const pump = () => {
    while (offset < body.length) {
      const more = req.write(body.subarray(offset, offset + step));
      offset += step;
      if (!more) return void req.once('drain', pump);
    }
    req.end(done);
  };
  pump();
}

/** One request with Node's http.request; rejects with the socket error when no HTTP answer arrives. */
function send(baseUrl: string, apiKey: string, upload: Upload): Promise<Answer> {
  const url = new URL(upload.path, baseUrl);
  const headers: Record<string, string | number> = {
    'x-api-key': apiKey,
    'content-type': upload.contentType ?? 'application/json',
  };
  if (!upload.chunked) headers['content-length'] = upload.body.length;
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, path: url.pathname, method: upload.method, headers },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const json = String(res.headers['content-type'] ?? '').includes('application/json');
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: json ? JSON.parse(text) : text });
        });
      },
    );
    req.on('error', (error: NodeJS.ErrnoException) =>
      reject(new Error(`${upload.method} ${upload.path}: no HTTP answer (${error.code ?? error.message})`)),
    );
    if (upload.readAfterSending) req.on('socket', (socket) => socket.pause());
    const sent = () => {
      if (upload.readAfterSending) req.socket?.resume();
    };
    if (upload.chunked) writeChunked(req, upload.body, sent);
    else req.end(upload.body, sent);
  });
}

/** A JSON body of `bytes` bytes: `shape` with its `filler` string padded to fit exactly. */
function jsonBody(bytes: number, shape: (filler: string) => unknown): Buffer {
  const overhead = Buffer.byteLength(JSON.stringify(shape('')));
  const body = Buffer.from(JSON.stringify(shape('x'.repeat(bytes - overhead))));
  expect(body.length).toBe(bytes);
  return body;
}

describe('request body limits', () => {
  let t: TestApp;
  let apiKey: string;
  let templateId: string;
  const tenMegabytes = 10 * MiB + 512 * 1024;

  const api = (method: string, path: string, body?: unknown) => t.request(method, path, { apiKey, body });

  /** What an oversized body must not change: templates, credits and their ledger, S3 settings. */
  async function accountState() {
    const templates = (await api('GET', '/v1/templates')).body.templates.map((x: { id: string }) => x.id);
    const account = (await api('GET', '/v1/account')).body;
    const transactions = (await api('GET', '/v1/account/transactions')).body;
    const s3 = (await api('GET', '/v1/integrations/s3')).status;
    return { templates, credits: account.credits, transactions, s3 };
  }

  function expectReadable413(answer: Answer, limit: number): void {
    expect(answer.status).toBe(413);
    expect(answer.headers.connection).toBe('close');
    expect(answer.body).toEqual({
      error: 'PAYLOAD_TOO_LARGE',
      message: expect.stringContaining(`limit of ${limit} bytes`),
    });
  }

  beforeAll(async () => {
    t = await startTestApp('sqlite');
    // Enterprise: no rate limit, so dozens of uploads in a row are answered on their size alone.
    apiKey = (await t.createAccount({ credits: 7, plan: 'enterprise' })).apiKey;
    const created = await api('POST', '/v1/templates', { name: 'Invoice', html: '<p>Invoice {{ number }}</p>' });
    expect(created.status).toBe(201);
    templateId = created.body.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('has the documented default limits', () => {
    expect(t.config.http).toMatchObject({
      bodyLimitBytes: 10 * MiB,
      templateBodyLimitBytes: 4 * MiB,
      smallBodyLimitBytes: 64 * 1024,
    });
  });

  const routes = [
    {
      method: 'POST',
      path: '/v1/templates',
      limit: () => t.config.http.templateBodyLimitBytes,
      // Fixed limits say so; a setting's limit names its variable.
      source: 'a fixed limit, above the largest template the API accepts',
      body: () => jsonBody(tenMegabytes, (filler) => ({ name: 'Too big', html: `<p>${filler}</p>` })),
    },
    {
      method: 'POST',
      path: '/v1/pdf/create',
      limit: () => t.config.http.bodyLimitBytes,
      source: 'the server sets this limit with PRESSROOM_BODY_LIMIT_BYTES',
      body: () => jsonBody(tenMegabytes, (filler) => ({ template_id: templateId, data: { number: filler } })),
    },
    {
      method: 'POST',
      path: '/v1/integrations/s3',
      limit: () => t.config.http.smallBodyLimitBytes,
      source: 'a fixed limit for requests of a few fields',
      body: () =>
        jsonBody(tenMegabytes, (filler) => ({
          endpoint_url: 'https://s3.example.com',
          access_key_id: `AKIA${filler}`,
          secret_access_key: 'secret-0123456789abcdef',
          bucket_name: 'pdfs',
        })),
    },
  ];

  it.each(routes)(
    '$method $path: four 10 MB bodies at once each get a readable 413 naming the route limit, and change nothing',
    async ({ method, path, limit, source, body }) => {
      const upload = { method, path, body: body() };
      const before = await accountState();
      for (const readAfterSending of [false, true]) {
        const answers = await Promise.all(
          [1, 2, 3, 4].map(() => send(t.baseUrl, apiKey, { ...upload, readAfterSending })),
        );
        for (const answer of answers) {
          expectReadable413(answer, limit());
          expect(answer.body.message).toContain(`for ${method} ${path}`);
          expect(answer.body.message).toContain(source);
        }
      }
      expect(await accountState()).toEqual(before);
    },
    180_000,
  );

  it.each([
    { kind: 'JSON sent chunked (no Content-Length)', contentType: 'application/json', chunked: true },
    { kind: 'XML with a Content-Length', contentType: 'application/xml', chunked: false },
    { kind: 'XML sent chunked', contentType: 'application/xml', chunked: true },
    { kind: 'plain text with a Content-Length', contentType: 'text/plain', chunked: false },
  ])(
    '$kind over the limit gets the same readable 413',
    async ({ contentType, chunked }) => {
      const before = await accountState();
      const body = jsonBody(tenMegabytes, (filler) => ({ name: 'Too big', html: filler }));
      const answer = await send(t.baseUrl, apiKey, {
        method: 'POST',
        path: '/v1/templates',
        body,
        contentType,
        chunked,
        readAfterSending: true,
      });
      expectReadable413(answer, t.config.http.templateBodyLimitBytes);
      expect(await accountState()).toEqual(before);
    },
    120_000,
  );

  it.each([
    {
      path: '/v1/pdf/create',
      shape: (filler: string) => ({ template_id: 'nosuchtempla', data: { note: filler } }),
      status: 404,
    },
    {
      path: '/v1/pdf/create-async',
      shape: (filler: string) => ({ template_id: 'nosuchtempla', data: { note: filler } }),
      status: 404,
    },
    // Read whole and validated: html is longer than the schema's 2,000,000 characters.
    { path: '/v1/templates/preview', shape: (filler: string) => ({ html: filler }), status: 422 },
  ])(
    'POST $path reads a 6 MB body (over the template limit) instead of refusing its size',
    async ({ path, shape, status }) => {
      const before = await accountState();
      const answer = await send(t.baseUrl, apiKey, {
        method: 'POST',
        path,
        body: jsonBody(6 * MiB, shape),
        readAfterSending: true,
      });
      expect(answer.status).toBe(status);
      expect(await accountState()).toEqual(before);
    },
    120_000,
  );

  it('every PDF tool (each listed in the OpenAPI document) and /v1/einvoice/validate read a 1 MB file in base64 instead of refusing its size', async () => {
    const paths = Object.keys((await t.request('GET', '/openapi.json')).body.paths as Record<string, unknown>).filter(
      (path) => path.startsWith('/v1/pdf-tools/'),
    );
    expect(paths.length).toBeGreaterThanOrEqual(11);
    const before = await accountState();
    // Valid base64 of bytes that are no PDF: read whole, then refused for what it is.
    const notPdf = Buffer.alloc(MiB, 7).toString('base64');
    for (const path of paths) {
      const answer = await send(t.baseUrl, apiKey, {
        method: 'POST',
        path,
        body: Buffer.from(JSON.stringify({ pdf_base64: notPdf, pdfs: [{ pdf_base64: notPdf }] })),
        readAfterSending: true,
      });
      expect(answer.status, `${path}: ${JSON.stringify(answer.body).slice(0, 200)}`).toBe(422);
    }
    const validate = await send(t.baseUrl, apiKey, {
      method: 'POST',
      path: '/v1/einvoice/validate',
      body: Buffer.from(JSON.stringify({ file_base64: notPdf })),
      readAfterSending: true,
    });
    expect(validate.status).not.toBe(413);
    expect(await accountState()).toEqual(before);
  }, 120_000);

  it('still answers 415 to a small body in a media type no route takes', async () => {
    const answer = await send(t.baseUrl, apiKey, {
      method: 'POST',
      path: '/v1/templates',
      body: Buffer.from('<template/>'),
      contentType: 'application/xml',
    });
    expect(answer.status).toBe(415);
    expect(answer.body.error).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('accepts a valid template just under the template limit, and refuses one byte over it', async () => {
    const limit = t.config.http.templateBodyLimitBytes;
    // The text fields at their schema maximum (html 2,000,000 and css 1,000,000 characters), the rest in sample data.
    const template = (filler: string) => ({
      name: 'Largest template',
      html: `<p>{{ note }}</p><!--${'h'.repeat(2_000_000 - 24)}-->`,
      css: `p{margin:0}/*${'c'.repeat(1_000_000 - 15)}*/`,
      sample_data: { note: filler },
    });
    const justUnder = jsonBody(limit - 256, template);
    const created = await send(t.baseUrl, apiKey, {
      method: 'POST',
      path: '/v1/templates',
      body: justUnder,
      readAfterSending: true,
    });
    expect(created.status, JSON.stringify(created.body).slice(0, 400)).toBe(201);
    expect(created.body.html.length).toBe(2_000_000);
    expect(created.body.css.length).toBe(1_000_000);
    expect(created.body.fields.map((f: { key: string }) => f.key)).toEqual(['note']);
    const updated = await send(t.baseUrl, apiKey, {
      method: 'PUT',
      path: `/v1/templates/${created.body.id}`,
      body: justUnder,
      readAfterSending: true,
    });
    expect(updated.status).toBe(200);

    const before = await accountState();
    const over = await send(t.baseUrl, apiKey, {
      method: 'POST',
      path: '/v1/templates',
      body: jsonBody(limit + 1, template),
      readAfterSending: true,
    });
    expectReadable413(over, limit);
    expect(await accountState()).toEqual(before);
    expect((await api('DELETE', `/v1/templates/${created.body.id}`)).status).toBe(200);
  }, 120_000);
});
