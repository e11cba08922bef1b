/**
 * Assets and remote resources in documents, with real Chromium (issue 13): an asset logo in the body
 * and in the footer, an uploaded font in the body and in the header, another account's asset out of
 * reach, remote images through the outbound guard (an operator-named loopback host works; the same
 * URL without that setting is a warning and no connection; a redirect to a private address is
 * refused at the hop), and a warning for every resource that did not load; the remote bounds (size,
 * type, count per document, time), the cache's Cache-Control policy, and remote fetching turned off.
 * Issue 37: a warning for what Chromium never asks for (credentials, some address literals, a URL
 * that is not valid) and for an image that loaded but did not decode (900 megapixels, or damaged).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfPageText, pdfText } from '../../../test/support/documents/pdf-tools.js';
import { bilevelPng, dataUri } from '../../../test/support/documents/png-images.js';
import { openTripwire, pdfTool, startTestRenderer } from '../../../test/support/documents/rendering-kit.js';
import { createLogger } from '../../shared/log.js';
import type { PdfRenderer } from '../pdf-renderer.js';
import { createDocumentResources } from './document-resources.js';
import { createRemoteResourceFetcher, type RemoteOutcome, type RemoteResourceFetcher } from './remote-fetcher.js';
import { RenderWarnings } from './render-warnings.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC',
  'base64',
);
const FONT = readFileSync('/usr/share/fonts/truetype/dejavu/DejaVuMathTeXGyre.ttf');
const ACCOUNT_A = 'acc_AAAAAAAAAAAAAAAA';
const ACCOUNT_B = 'acc_BBBBBBBBBBBBBBBB';
/** 30,000 × 30,000: 900 megapixels, past what Chromium decodes at all (2^29 pixels). */
const HUGE = bilevelPng(30_000, 30_000);
/** PNG magic bytes, then nothing an image decoder can read. */
const DAMAGED = Buffer.concat([PNG.subarray(0, 8), Buffer.alloc(2048, 7)]);
const ASSETS = new Map([
  [`${ACCOUNT_A}\u0000logo.png`, { body: PNG, contentType: 'image/png' }],
  [`${ACCOUNT_A}\u0000huge.png`, { body: HUGE, contentType: 'image/png' }],
  [`${ACCOUNT_A}\u0000damaged.png`, { body: DAMAGED, contentType: 'image/png' }],
  [`${ACCOUNT_A}\u0000fonts/brand.ttf`, { body: FONT, contentType: 'font/ttf' }],
]);
const assets = async (accountId: string, name: string) => ASSETS.get(`${accountId}\u0000${name}`);

let imageServer: Server;
let imagePort = 0;
let imageConnections = 0;
/** Requests the image server answered, by path. */
const requests = new Map<string, number>();
const asked = (path: string) => requests.get(path) ?? 0;
const BIG = Buffer.concat([PNG, Buffer.alloc(1536 * 1024)]);
const imageSockets = new Set<Socket>();
let tripwire: Awaited<ReturnType<typeof openTripwire>>;
let named: RemoteResourceFetcher;
let unnamed: RemoteResourceFetcher;
let renderer: PdfRenderer;
let strict: PdfRenderer;

const logger = createLogger('silent');

beforeAll(async () => {
  tripwire = await openTripwire();
  imageServer = createServer((req, res) => {
    requests.set(req.url ?? '', asked(req.url ?? '') + 1);
    if (req.url === '/cached.png') {
      res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'max-age=600' }).end(PNG);
    } else if (req.url === '/no-store.png') {
      res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'no-store' }).end(PNG);
    } else if (req.url === '/big.png') {
      res.writeHead(200, { 'content-type': 'image/png' }).end(BIG);
    } else if (req.url === '/page.html') {
      res.writeHead(200, { 'content-type': 'text/html' }).end('<p>not an image</p>');
    } else if (req.url === '/slow.png') {
      // Answers after the test's fetcher has given up (it allows 300 ms).
      setTimeout(() => res.writeHead(200, { 'content-type': 'image/png' }).end(PNG), 3_000).unref();
    } else if (req.url === '/logo.png') {
      res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'max-age=60' }).end(PNG);
    } else if (req.url === '/to-private') {
      res.writeHead(302, { location: `http://127.0.0.1:${tripwire.port}/secret.png` }).end();
    } else {
      res.writeHead(404).end();
    }
  });
  imageServer.on('connection', (socket) => {
    imageConnections += 1;
    imageSockets.add(socket);
    socket.on('close', () => imageSockets.delete(socket));
  });
  await new Promise<void>((resolve) => imageServer.listen(0, '127.0.0.1', resolve));
  imagePort = (imageServer.address() as AddressInfo).port;
  const common = { enabled: true, maxBytes: 1024 * 1024, timeoutMs: 10_000, cacheBytes: 1024 * 1024, logger };
  named = createRemoteResourceFetcher({ ...common, hosts: [`127.0.0.1:${imagePort}`] });
  unnamed = createRemoteResourceFetcher({ ...common, hosts: [] });
  [renderer, strict] = await Promise.all([
    startTestRenderer({ concurrency: 1 }, { assets, remoteResources: named }),
    startTestRenderer({ concurrency: 1 }, { assets, remoteResources: unnamed }),
  ]);
}, 180_000);

afterAll(async () => {
  await Promise.all([renderer?.close(), strict?.close(), named?.close(), unnamed?.close()]);
  for (const socket of imageSockets) socket.destroy();
  await new Promise<void>((resolve) => (imageServer ? imageServer.close(() => resolve()) : resolve()));
  await tripwire?.close();
});

/**
 * Rows of `pdfimages -list` that are our 1×1 logo. (An image that did not load prints Chromium's
 * broken-image icon, which is an image too, of another size.)
 */
function images(pdf: Buffer): string[] {
  const rows = pdfTool('pdfimages', pdf, ['-list'])
    .split('\n')
    .slice(2)
    .filter((line) => line.trim() !== '');
  return rows.filter((row) => {
    const [, , type, width, height] = row.trim().split(/\s+/);
    return type === 'image' && width === '1' && height === '1';
  });
}

const BODY = '<!doctype html><html><body><p>Invoice</p></body></html>';

describe('assets in documents', () => {
  it('shows an asset logo in the body', async () => {
    const result = await renderer.render({
      template: { html: `<img src="{{ asset('logo.png') }}" width="64">` },
      data: {},
      accountId: ACCOUNT_A,
    });
    expect(images(result.pdf)).toHaveLength(1);
    expect(result.warnings).toEqual([]);
  });

  it('shows an asset logo in the footer, where Chromium itself loads nothing', async () => {
    const footer = `<div style="font-size:10px"><img src="{{ asset('logo.png') }}" width="16"> <span class="pageNumber"></span></div>`;
    const result = await renderer.render({
      template: { html: BODY, page: { footer_html: footer, margin: { bottom: '20mm' } } },
      data: {},
      accountId: ACCOUNT_A,
    });
    expect(images(result.pdf)).toHaveLength(1);
    expect(result.warnings).toEqual([]);
  });

  it('embeds an uploaded font in the body', async () => {
    const html = `<style>@font-face { font-family: Brand; src: url("{{ asset('fonts/brand.ttf') }}"); } p { font-family: Brand; }</style><p>Invoice</p>`;
    const result = await renderer.render({ template: { html }, data: {}, accountId: ACCOUNT_A });
    expect(pdfTool('pdffonts', result.pdf)).toMatch(/DejaVuMathTeXGyre/i);
  });

  it('embeds a font declared for the document and used only in the header', async () => {
    const css = `@font-face { font-family: Brand; src: url("https://assets.pressroom.internal/a/fonts/brand.ttf"); }`;
    const header = `<div style="font-family: Brand; font-size: 12px">ACME header</div>`;
    const result = await renderer.render({
      template: { html: BODY, css, page: { header_html: header, margin: { top: '20mm' } } },
      data: {},
      accountId: ACCOUNT_A,
    });
    expect(pdfTool('pdffonts', result.pdf)).toMatch(/DejaVuMathTeXGyre/i);
  });

  it("never serves another account's asset, by name or by URL", async () => {
    const html = [
      `<img src="{{ asset('logo.png') }}">`,
      `<img src="https://assets.pressroom.internal/a/${ACCOUNT_A}/logo.png">`,
      `<img src="https://assets.pressroom.internal/a/../${ACCOUNT_A}/logo.png">`,
      `<img src="https://assets.pressroom.internal/a/%2E%2E%2F${ACCOUNT_A}%2Flogo.png">`,
      `<img src="https://assets.pressroom.internal/${ACCOUNT_A}/logo.png">`,
    ].join('');
    const result = await renderer.render({ template: { html }, data: {}, accountId: ACCOUNT_B });
    expect(images(result.pdf)).toHaveLength(0);
    expect(result.warnings.length).toBeGreaterThan(0);
    expect(result.warnings.every((w) => w.code === 'ASSET_NOT_FOUND')).toBe(true);
  });

  it('warns about an asset name the account does not have', async () => {
    const result = await renderer.render({
      template: { html: `<img src="{{ asset('missing.png') }}">` },
      data: {},
      accountId: ACCOUNT_A,
    });
    expect(result.warnings).toEqual([
      {
        code: 'ASSET_NOT_FOUND',
        message: expect.stringContaining('"missing.png"'),
        url: 'https://assets.pressroom.internal/a/missing.png',
      },
    ]);
  });
});

describe('images that loaded and did not decode (issue 37)', () => {
  it('a 900-megapixel PNG, as an asset and inline, and a damaged one: broken images, each with a warning', async () => {
    const html = `<img src="{{ asset('huge.png') }}" width="50"><img src="{{ asset('damaged.png') }}" width="50"><img src="{{ inline }}" width="50">`;
    const inline = dataUri(HUGE);
    const result = await renderer.render({ template: { html }, data: { inline }, accountId: ACCOUNT_A });
    const message = expect.stringContaining(
      'could not be decoded — a damaged file, or more pixels than Chromium decodes at all (2^29, about 537 megapixels)',
    );
    expect(result.warnings).toEqual([
      { code: 'IMAGE_NOT_DECODED', message, url: `${inline.slice(0, 96)}…` },
      { code: 'IMAGE_NOT_DECODED', message, url: 'https://assets.pressroom.internal/a/damaged.png' },
      { code: 'IMAGE_NOT_DECODED', message, url: 'https://assets.pressroom.internal/a/huge.png' },
    ]);
  });
});

describe('URLs Chromium never asks for (issue 37)', () => {
  it('credentials, [::127.0.0.1], [64:ff9b::7f00:1] and [fe80::1%lo], as images and CSS: a warning each, no connection', async () => {
    const port = tripwire.port;
    const urls = [
      `http://user:pw@127.0.0.1:${port}/a.png`,
      `http://[::127.0.0.1]:${port}/b.png`,
      `http://[64:ff9b::7f00:1]:${port}/c.png`,
      `http://[fe80::1%lo]:${port}/d.png`,
    ];
    const html = urls
      .map(
        (url, i) =>
          `<img src="${url}"><div style="width:9px;height:9px;background:url('${url.replace('.png', '-bg.png')}')"></div><p>${i}</p>`,
      )
      .join('');
    const result = await renderer.render({ template: { html }, data: {}, accountId: ACCOUNT_A });
    const credentials = { code: 'RESOURCE_BLOCKED', message: 'The URL must not contain a user name or password.' };
    const privateAddress = {
      code: 'RESOURCE_BLOCKED',
      message: expect.stringContaining('private, loopback or link-local'),
    };
    const invalid = { code: 'RESOURCE_FAILED', message: 'The URL is not valid.' };
    expect(result.warnings).toEqual([
      { ...privateAddress, url: `http://[64:ff9b::7f00:1]:${port}/c-bg.png` },
      { ...privateAddress, url: `http://[64:ff9b::7f00:1]:${port}/c.png` },
      { ...privateAddress, url: `http://[::7f00:1]:${port}/b-bg.png` },
      { ...privateAddress, url: `http://[::7f00:1]:${port}/b.png` },
      { ...invalid, url: `http://[fe80::1%lo]:${port}/d-bg.png` },
      { ...invalid, url: `http://[fe80::1%lo]:${port}/d.png` },
      { ...credentials, url: `http://user:[redacted]@127.0.0.1:${port}/a-bg.png` },
      { ...credentials, url: `http://user:[redacted]@127.0.0.1:${port}/a.png` },
    ]);
    expect(tripwire.hits()).toBe(0);
  });

  it('a link is not a resource: an <a href> with credentials gets no warning', async () => {
    const result = await renderer.render({
      template: { html: '<a href="https://user:pw@example.com/">account</a>' },
      data: {},
      accountId: ACCOUNT_A,
    });
    expect(result.warnings).toEqual([]);
  });
});

describe('remote resources', () => {
  it('loads a remote PNG from a loopback host the operator named', async () => {
    const result = await renderer.render({
      template: { html: `<img src="http://127.0.0.1:${imagePort}/logo.png" width="64">` },
      data: {},
      accountId: ACCOUNT_A,
    });
    expect(images(result.pdf)).toHaveLength(1);
    expect(result.warnings).toEqual([]);
  });

  it('refuses the same URL without that setting: a warning, and no connection', async () => {
    const before = imageConnections;
    const url = `http://127.0.0.1:${imagePort}/logo.png?token=s3cret`;
    const result = await strict.render({
      template: { html: `<img src="{{ url }}" width="64">` },
      data: { url },
      accountId: ACCOUNT_A,
    });
    expect(images(result.pdf)).toHaveLength(0);
    expect(result.warnings).toEqual([
      {
        code: 'RESOURCE_BLOCKED',
        message: expect.stringContaining('private, loopback or link-local'),
        url: `http://127.0.0.1:${imagePort}/logo.png?token=[redacted]`,
      },
    ]);
    expect(imageConnections).toBe(before);
  });

  it('refuses a redirect from an allowed host to a private address at the hop', async () => {
    const result = await renderer.render({
      template: { html: `<img src="http://127.0.0.1:${imagePort}/to-private">` },
      data: {},
      accountId: ACCOUNT_A,
    });
    expect(images(result.pdf)).toHaveLength(0);
    expect(result.warnings).toEqual([
      { code: 'RESOURCE_BLOCKED', message: expect.any(String), url: `http://127.0.0.1:${imagePort}/to-private` },
    ]);
    expect(tripwire.hits()).toBe(0);
  });

  it('prints nothing where an image did not load or decode — no broken-image icon — and keeps its box (issue 42)', async () => {
    // Missing on its server, refused by the guard, an asset the account lacks, a damaged file: each a warning, none an image in the PDF.
    const html = [
      `<img src="http://127.0.0.1:${imagePort}/nothing.png" width="10" height="2000">`,
      '<p>After the missing image</p>',
      `<img src="http://[::127.0.0.1]:${tripwire.port}/blocked.png"><img src="{{ asset('no-such.png') }}"><img src="{{ asset('damaged.png') }}" width="50">`,
    ].join('');
    const result = await renderer.render({ template: { html }, data: {}, accountId: ACCOUNT_A });
    expect(result.warnings.map((w) => w.code).sort()).toEqual([
      'ASSET_NOT_FOUND',
      'IMAGE_NOT_DECODED',
      'RESOURCE_BLOCKED',
      'RESOURCE_FAILED',
    ]);
    expect(
      pdfTool('pdfimages', result.pdf, ['-list'])
        .split('\n')
        .slice(2)
        .filter((line) => line.trim() !== ''),
    ).toEqual([]);
    // The missing image's 2000 px box still pushes the text after it off the first page.
    expect(pdfPageText(result.pdf, 1)).not.toContain('After the missing image');
    expect(pdfText(result.pdf)).toContain('After the missing image');
  });

  it('warns about a remote file that is not there', async () => {
    const result = await renderer.render({
      template: { html: `<img src="http://127.0.0.1:${imagePort}/nothing.png">` },
      data: {},
      accountId: ACCOUNT_A,
    });
    expect(result.warnings).toEqual([
      {
        code: 'RESOURCE_FAILED',
        message: 'The server answered HTTP 404.',
        url: `http://127.0.0.1:${imagePort}/nothing.png`,
      },
    ]);
  });
});

describe('remote resource bounds and cache', () => {
  const img = (path: string) => `<img src="http://127.0.0.1:${imagePort}${path}" width="64">`;

  it('keeps a response its server lets it keep, and fetches again one it may not (Cache-Control)', async () => {
    // Through the process's fetcher: a reused print page may itself reuse an image it printed before
    // by URL (the document's list of available images), so page renders cannot count requests.
    for (let i = 0; i < 2; i++) {
      for (const path of ['/cached.png', '/no-store.png'])
        expect((await named.fetch(`http://127.0.0.1:${imagePort}${path}`)).contentType).toBe('image/png');
    }
    expect(asked('/cached.png')).toBe(1);
    expect(asked('/no-store.png')).toBe(2);
  });

  it('refuses a file past the size bound and one that is not an image, font or stylesheet, with a warning each', async () => {
    const result = await renderer.render({
      template: { html: img('/big.png') + img('/page.html') },
      data: {},
      accountId: ACCOUNT_A,
    });
    expect(images(result.pdf)).toHaveLength(0);
    expect(result.warnings).toEqual(
      expect.arrayContaining([
        {
          code: 'RESOURCE_TOO_LARGE',
          message: expect.stringContaining('larger than 1048576 bytes'),
          url: `http://127.0.0.1:${imagePort}/big.png`,
        },
        {
          code: 'RESOURCE_TYPE_REFUSED',
          message: expect.stringContaining('this is text/html'),
          url: `http://127.0.0.1:${imagePort}/page.html`,
        },
      ]),
    );
    expect(result.warnings).toHaveLength(2);
  });

  // The bounds below are the document's (document-resources.ts): checked on its resources directly,
  // with the real fetcher and server, no page needed.
  const bounds = { maxPerDocument: 2, documentMaxBytes: 1024 * 1024, documentTimeoutMs: 10_000 };

  it('loads at most the per-document count of remote resources; the rest are warnings', async () => {
    const warnings = new RenderWarnings();
    const resources = createDocumentResources({ accountId: ACCOUNT_A, warnings, remote: named, bounds });
    const loaded = [];
    for (const path of ['/cached.png', '/logo.png', '/no-store.png'])
      loaded.push(await resources.load(`http://127.0.0.1:${imagePort}${path}`, 'Image'));
    expect(loaded.map((r) => r?.contentType)).toEqual(['image/png', 'image/png', undefined]);
    expect(warnings.list()).toEqual([
      {
        code: 'RESOURCE_LIMIT',
        message: expect.stringContaining('at most 2 remote resources'),
        url: `http://127.0.0.1:${imagePort}/no-store.png`,
      },
    ]);
  });

  it('gives up on a resource that does not arrive in time', async () => {
    const outcomes: RemoteOutcome[] = [];
    const quick = createRemoteResourceFetcher({
      enabled: true,
      hosts: [`127.0.0.1:${imagePort}`],
      maxBytes: 1024 * 1024,
      timeoutMs: 300,
      cacheBytes: 1024,
      logger,
      onOutcome: (o) => outcomes.push(o),
    });
    try {
      const warnings = new RenderWarnings();
      const resources = createDocumentResources({ accountId: ACCOUNT_A, warnings, remote: quick, bounds });
      expect(await resources.load(`http://127.0.0.1:${imagePort}/slow.png`, 'Image')).toBeUndefined();
      expect(warnings.list()).toEqual([
        {
          code: 'RESOURCE_TIMEOUT',
          message: expect.stringContaining('within 300 ms'),
          url: `http://127.0.0.1:${imagePort}/slow.png`,
        },
      ]);
      expect(outcomes).toEqual(['timeout']);
    } finally {
      await quick.close();
    }
  });

  it('with remote resources off (PRESSROOM_REMOTE_RESOURCES=off), asks no server and says so', async () => {
    const off = createRemoteResourceFetcher({
      enabled: false,
      hosts: [`127.0.0.1:${imagePort}`],
      maxBytes: 1024,
      timeoutMs: 1000,
      cacheBytes: 1024,
      logger,
    });
    try {
      const before = asked('/logo.png');
      const warnings = new RenderWarnings();
      const resources = createDocumentResources({ accountId: ACCOUNT_A, warnings, remote: off, bounds });
      expect(await resources.load(`http://127.0.0.1:${imagePort}/logo.png`, 'Image')).toBeUndefined();
      expect(warnings.list()).toEqual([
        {
          code: 'RESOURCE_BLOCKED',
          message: expect.stringContaining('PRESSROOM_REMOTE_RESOURCES=off'),
          url: `http://127.0.0.1:${imagePort}/logo.png`,
        },
      ]);
      expect(asked('/logo.png')).toBe(before);
    } finally {
      await off.close();
    }
  });
});
