/**
 * Assets and remote resources in documents, with real Chromium (issue 13): an asset logo in the body
 * and in the footer, an uploaded font in the body and in the header, another account's asset out of
 * reach, remote images through the outbound guard (an operator-named loopback host works; the same
 * URL without that setting is a warning and no connection; a redirect to a private address is
 * refused at the hop), and a warning for every resource that did not load.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTripwire, pdfTool, startTestRenderer } from '../../../test/support/rendering-kit.js';
import { createLogger } from '../../shared/log.js';
import type { PdfRenderer } from '../pdf-renderer.js';
import { createRemoteResourceFetcher, type RemoteResourceFetcher } from './remote-fetcher.js';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC', 'base64');
const FONT = readFileSync('/usr/share/fonts/truetype/dejavu/DejaVuMathTeXGyre.ttf');
const ACCOUNT_A = 'acc_AAAAAAAAAAAAAAAA';
const ACCOUNT_B = 'acc_BBBBBBBBBBBBBBBB';
const ASSETS = new Map([
  [`${ACCOUNT_A}\u0000logo.png`, { body: PNG, contentType: 'image/png' }],
  [`${ACCOUNT_A}\u0000fonts/brand.ttf`, { body: FONT, contentType: 'font/ttf' }],
]);
const assets = async (accountId: string, name: string) => ASSETS.get(`${accountId}\u0000${name}`);

let imageServer: Server;
let imagePort = 0;
let imageConnections = 0;
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
    if (req.url === '/logo.png') {
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
  const rows = pdfTool('pdfimages', pdf, ['-list']).split('\n').slice(2).filter((line) => line.trim() !== '');
  return rows.filter((row) => {
    const [, , type, width, height] = row.trim().split(/\s+/);
    return type === 'image' && width === '1' && height === '1';
  });
}

const BODY = '<!doctype html><html><body><p>Invoice</p></body></html>';

describe('assets in documents', () => {
  it('shows an asset logo in the body', async () => {
    const result = await renderer.render({ template: { html: `<img src="{{ asset('logo.png') }}" width="64">` }, data: {}, accountId: ACCOUNT_A });
    expect(images(result.pdf)).toHaveLength(1);
    expect(result.warnings).toEqual([]);
  });

  it('shows an asset logo in the footer, where Chromium itself loads nothing', async () => {
    const footer = `<div style="font-size:10px"><img src="{{ asset('logo.png') }}" width="16"> <span class="pageNumber"></span></div>`;
    const result = await renderer.render({ template: { html: BODY, page: { footer_html: footer, margin: { bottom: '20mm' } } }, data: {}, accountId: ACCOUNT_A });
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
    const result = await renderer.render({ template: { html: BODY, css, page: { header_html: header, margin: { top: '20mm' } } }, data: {}, accountId: ACCOUNT_A });
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
    const result = await renderer.render({ template: { html: `<img src="{{ asset('missing.png') }}">` }, data: {}, accountId: ACCOUNT_A });
    expect(result.warnings).toEqual([
      { code: 'ASSET_NOT_FOUND', message: expect.stringContaining('"missing.png"'), url: 'https://assets.pressroom.internal/a/missing.png' },
    ]);
  });
});

describe('remote resources', () => {
  it('loads a remote PNG from a loopback host the operator named', async () => {
    const result = await renderer.render({ template: { html: `<img src="http://127.0.0.1:${imagePort}/logo.png" width="64">` }, data: {}, accountId: ACCOUNT_A });
    expect(images(result.pdf)).toHaveLength(1);
    expect(result.warnings).toEqual([]);
  });

  it('refuses the same URL without that setting: a warning, and no connection', async () => {
    const before = imageConnections;
    const url = `http://127.0.0.1:${imagePort}/logo.png?token=s3cret`;
    const result = await strict.render({ template: { html: `<img src="{{ url }}" width="64">` }, data: { url }, accountId: ACCOUNT_A });
    expect(images(result.pdf)).toHaveLength(0);
    expect(result.warnings).toEqual([{ code: 'RESOURCE_BLOCKED', message: expect.stringContaining('private, loopback or link-local'), url: `http://127.0.0.1:${imagePort}/logo.png?token=[redacted]` }]);
    expect(imageConnections).toBe(before);
  });

  it('refuses a redirect from an allowed host to a private address at the hop', async () => {
    const result = await renderer.render({ template: { html: `<img src="http://127.0.0.1:${imagePort}/to-private">` }, data: {}, accountId: ACCOUNT_A });
    expect(images(result.pdf)).toHaveLength(0);
    expect(result.warnings).toEqual([{ code: 'RESOURCE_BLOCKED', message: expect.any(String), url: `http://127.0.0.1:${imagePort}/to-private` }]);
    expect(tripwire.hits()).toBe(0);
  });

  it('warns about a remote file that is not there', async () => {
    const result = await renderer.render({ template: { html: `<img src="http://127.0.0.1:${imagePort}/nothing.png">` }, data: {}, accountId: ACCOUNT_A });
    expect(result.warnings).toEqual([{ code: 'RESOURCE_FAILED', message: 'The server answered HTTP 404.', url: `http://127.0.0.1:${imagePort}/nothing.png` }]);
  });
});
