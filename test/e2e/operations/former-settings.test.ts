/**
 * A former setting still set after an upgrade keeps its promise (issue 50 point 5): an operator's
 * PRESSROOM_REMOTE_RESOURCE_HOSTS (merged into PRESSROOM_REMOTE_RESOURCES) still lets a document load
 * its image from that host, and a former bound set lower than the constant that replaced it stays the
 * bound. The image comes from a loopback server, which documents may reach only when the operator
 * names it. Config is the same on both databases, so one (SQLite) is enough here.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pdfTool } from '../../support/documents/pdf-tools.js';
import { startTestApp, type TestApp } from '../../support/test-app.js';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC',
  'base64',
);

/** Rows of `pdfimages -list` that are the 1×1 logo (a broken image prints Chromium's icon, of another size). */
const logos = (pdf: Buffer) =>
  pdfTool('pdfimages', pdf, ['-list'])
    .split('\n')
    .slice(2)
    .filter((row) => /^\s*\d+\s+\d+\s+image\s+1\s+1\s/.test(row));

describe('former settings after an upgrade', () => {
  let images: Server;
  let t: TestApp;
  let apiKey: string;
  let imageRequests = 0;

  beforeAll(async () => {
    images = createServer((_req, res) => {
      imageRequests += 1;
      res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'no-store' }).end(PNG);
    });
    await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
    const port = (images.address() as AddressInfo).port;
    t = await startTestApp('sqlite', {
      PRESSROOM_REMOTE_RESOURCE_HOSTS: `127.0.0.1:${port}`,
      PRESSROOM_ASSET_MAX_BYTES: '2048',
    });
    apiKey = (await t.createAccount({ credits: 5, plan: 'enterprise' })).apiKey;
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    await new Promise<void>((resolve) => (images ? images.close(() => resolve()) : resolve()));
  });

  it('PRESSROOM_REMOTE_RESOURCE_HOSTS still lets the named host’s image into the document', async () => {
    const port = (images.address() as AddressInfo).port;
    const html = `<p>Invoice</p><img src="http://127.0.0.1:${port}/logo.png" width="32">`;
    const created = await t.request('POST', '/v1/templates', {
      apiKey,
      body: { name: 'Logo from the asset host', html },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const res = await t.request('POST', '/v1/pdf/create', {
      apiKey,
      body: { template_id: created.body.id, data: {}, export_type: 'binary' },
    });
    expect(res.status, res.bytes.toString('utf8', 0, 300)).toBe(200);
    expect(res.headers.get('x-pressroom-warning-details'), 'no RESOURCE_BLOCKED').toBeNull();
    expect(logos(res.bytes)).toHaveLength(1);
    expect(imageRequests).toBeGreaterThan(0);
  });

  it('a former bound set lower than its constant stays the bound: a 3 KB asset is refused under PRESSROOM_ASSET_MAX_BYTES=2048', async () => {
    const css = (bytes: number) => Buffer.from(`p { color: red; }\n/*${'x'.repeat(bytes - 24)}*/\n`).toString('base64');
    const small = await t.request('POST', '/v1/assets', {
      apiKey,
      body: { name: 'small.css', content_base64: css(1024) },
    });
    expect(small.status, JSON.stringify(small.body)).toBe(201);
    const large = await t.request('POST', '/v1/assets', {
      apiKey,
      body: { name: 'large.css', content_base64: css(3072) },
    });
    expect(large.status).toBe(413);
    expect(large.body).toEqual({ error: 'PAYLOAD_TOO_LARGE', message: expect.stringContaining('at most 2048 bytes') });
  });
});
