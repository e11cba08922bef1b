/**
 * Image output over real HTTP with real Chromium, on SQLite and PostgreSQL: template kinds and the kind
 * filter, layers, `POST /v1/image/create` (format and pixel size read from the file header, a layer's
 * text, colour, background, visibility and image seen in the pixels, against the unmodified render),
 * image_url through the outbound guard while the page itself reaches nothing, every error path
 * charging nothing, and layer work bounded and off the service's thread: /healthz answers while it runs.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCUMENT_DIALECTS } from '../../support/databases.js';
import { countPixels, decodePng, imageInfo, solidPng } from '../../support/documents/image-tools.js';
import { pdfInfo, pdfPages } from '../../support/documents/pdf-tools.js';
import { startS3Server, type S3Server } from '../../support/s3-server.js';
import { startTestApp, type TestApp, type TestResponse } from '../../support/test-app.js';
import { MAX_MODIFICATIONS } from '../../../src/templates/layers/layer-modifications.js';
import { MAX_TEMPLATE_LAYERS } from '../../../src/templates/layers/template-layers.js';

/** A 200 × 100 canvas with one large-font text layer: a modified text shows in many pixels. */
const TITLE_CARD = `<html><head><style>html,body{margin:0;background:#fff} .t{font:bold 80px/100px sans-serif;color:#000;margin:0 0 0 10px}</style></head>
<body><p class="t" data-layer="title">{{ word }}</p></body></html>`;
/** Two image layers side by side, and an image the page would have to fetch itself. */
const GALLERY = (
  directUrl: string,
) => `<html><head><style>html,body{margin:0;background:#fff} img{position:absolute;top:0;width:100px;height:100px}</style></head>
<body><img data-layer="logo" style="left:0"><img data-layer-name="badge" style="left:100px"><div data-layer="box"></div><img src="${directUrl}" style="width:1px;height:1px"></body></html>`;

/** A template that draws with a script, and tries the network from the page. */
const SCRIPTED = (
  probeUrl: string,
) => `<html><head><style>html,body{margin:0} #box{width:200px;height:100px;background:#fff}</style></head>
<body><div id="box" data-layer="box"></div><script>
window.pressroomReady = new Promise((done) => requestAnimationFrame(() => { document.getElementById('box').style.background = 'rgb(0, 128, 0)'; done(); }));
fetch('${probeUrl}/from-script').catch(() => {});
</script></body></html>`;

const S3_KEY = 'AKIAPRESSROOMTEST01';
const S3_SECRET = 'pressroom-test-secret-key-0123456789ABCDEF';

const isDark = ([r, g, b]: number[]) => r! < 100 && g! < 100 && b! < 100;
const isRed = ([r, g, b]: number[]) => r! > 200 && g! < 80 && b! < 80;

describe.each(DOCUMENT_DIALECTS)('image output on %s', (dialect) => {
  let t: TestApp;
  let alice: { accountId: string; apiKey: string };
  let bob: { accountId: string; apiKey: string };
  let assets: Server;
  let s3: S3Server;
  let assetsUrl: string;
  const assetRequests: string[] = [];

  const newTemplate = async (body: Record<string, unknown>, apiKey = alice.apiKey) => {
    const res = await t.request('POST', '/v1/templates', { apiKey, body: { name: 'Card', ...body } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id as string;
  };
  const createImage = (
    body: Record<string, unknown>,
    options: { apiKey?: string; headers?: Record<string, string> } = {},
  ) =>
    t.request('POST', '/v1/image/create', { apiKey: options.apiKey ?? alice.apiKey, body, headers: options.headers });
  const binaryImage = async (body: Record<string, unknown>) => {
    const res = await createImage({ export_type: 'binary', ...body });
    expect(res.status, res.bytes.toString('utf8', 0, 300)).toBe(200);
    return res;
  };
  const balance = async (apiKey = alice.apiKey) =>
    (await t.request('GET', '/v1/account', { apiKey })).body.credits as number;
  const ledgerSize = async () =>
    (await t.request('GET', '/v1/account/transactions?limit=1000', { apiKey: alice.apiKey })).body.transactions
      .length as number;

  beforeAll(async () => {
    s3 = await startS3Server({ accessKeyId: S3_KEY, secretAccessKey: S3_SECRET, buckets: ['images'] });
    t = await startTestApp(dialect);
    alice = await t.createAccount({ credits: 100, plan: 'enterprise' });
    bob = await t.createAccount({ credits: 0, plan: 'enterprise' });
    assets = createServer((req, res) => {
      assetRequests.push(req.url ?? '');
      if (req.url === '/red.png')
        return void res.writeHead(200, { 'content-type': 'image/png' }).end(solidPng(20, 20, [255, 0, 0]));
      res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => assets.listen(0, '127.0.0.1', resolve));
    assetsUrl = `http://127.0.0.1:${(assets.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await t?.close();
    await s3?.stop();
    assets?.closeAllConnections();
    await new Promise<void>((resolve) => (assets ? assets.close(() => resolve()) : resolve()));
  });

  it('templates carry a kind: pdf by default, image with a canvas (default 1080 × 1080), filtered by ?kind=, refused where they do not fit', async () => {
    const pdfId = await newTemplate({ html: '<p>pdf</p>' });
    const imageId = await newTemplate({ html: TITLE_CARD, kind: 'image', canvas: { width: 200, height: 100 } });
    const squareId = await newTemplate({ html: '<p>square</p>', kind: 'image' });
    expect((await t.request('GET', `/v1/templates/${pdfId}`, { apiKey: alice.apiKey })).body).toMatchObject({
      kind: 'pdf',
      canvas: null,
    });
    expect((await t.request('GET', `/v1/templates/${imageId}`, { apiKey: alice.apiKey })).body).toMatchObject({
      kind: 'image',
      canvas: { width: 200, height: 100 },
      page: null,
    });
    expect((await t.request('GET', `/v1/templates/${squareId}`, { apiKey: alice.apiKey })).body.canvas).toEqual({
      width: 1080,
      height: 1080,
    });

    const ids = async (query: string) =>
      (await t.request('GET', `/v1/templates${query}`, { apiKey: alice.apiKey })).body.templates.map(
        (x: { id: string; kind: string }) => `${x.id}:${x.kind}`,
      );
    expect(await ids('?kind=image')).toEqual(expect.arrayContaining([`${imageId}:image`, `${squareId}:image`]));
    expect(await ids('?kind=image')).not.toContain(`${pdfId}:pdf`);
    expect(await ids('?kind=pdf')).toContain(`${pdfId}:pdf`);
    expect((await ids('?kind=pdf')).every((entry: string) => entry.endsWith(':pdf'))).toBe(true);
    expect(await ids('')).toEqual(expect.arrayContaining([`${pdfId}:pdf`, `${imageId}:image`]));
    const badKind = await t.request('GET', '/v1/templates?kind=gif', { apiKey: alice.apiKey });
    expect(badKind.status).toBe(422);
    expect(badKind.body.detail[0].loc).toEqual(['query', 'kind']);

    const canvasOnPdf = await t.request('POST', '/v1/templates', {
      apiKey: alice.apiKey,
      body: { name: 'x', html: '<p>x</p>', canvas: { width: 100, height: 100 } },
    });
    expect(canvasOnPdf.status).toBe(422);
    expect(canvasOnPdf.body.detail[0].loc).toEqual(['body', 'canvas']);
    const pageOnImage = await t.request('POST', '/v1/templates', {
      apiKey: alice.apiKey,
      body: { name: 'x', html: '<p>x</p>', kind: 'image', page: { format: 'A4' } },
    });
    expect(pageOnImage.status).toBe(422);
    expect(pageOnImage.body.detail[0].loc).toEqual(['body', 'page']);
    for (const canvas of [{ width: 15, height: 100 }, { width: 100, height: 5001 }, { width: 100 }]) {
      const res = await t.request('POST', '/v1/templates', {
        apiKey: alice.apiKey,
        body: { name: 'x', html: '<p>x</p>', kind: 'image', canvas },
      });
      expect(res.status, JSON.stringify(canvas)).toBe(422);
    }
    // Switching kinds: to pdf drops the canvas; back to image gets the default again.
    expect(
      (await t.request('PUT', `/v1/templates/${squareId}`, { apiKey: alice.apiKey, body: { kind: 'pdf' } })).body,
    ).toMatchObject({ kind: 'pdf', canvas: null });
    expect(
      (
        await t.request('PUT', `/v1/templates/${squareId}`, {
          apiKey: alice.apiKey,
          body: { kind: 'image', canvas: { width: 300, height: 200 } },
        })
      ).body,
    ).toMatchObject({ kind: 'image', canvas: { width: 300, height: 200 } });
    expect(
      (await t.request('PUT', `/v1/templates/${squareId}`, { apiKey: alice.apiKey, body: { html: '<p>kept</p>' } }))
        .body.canvas,
    ).toEqual({ width: 300, height: 200 });
  });

  it('lists the layers of a template, with the reserved background layer; other accounts get 403', async () => {
    const id = await newTemplate({
      html: TITLE_CARD.replace('</body>', '<img data-layer-name="logo"><div data-layer="title"></div></body>'),
      kind: 'image',
      canvas: { width: 200, height: 100 },
    });
    const res = await t.request('GET', `/v1/templates/${id}/layers`, { apiKey: alice.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      layers: [
        { name: 'background', tag: 'body', type: 'background', modifiable: ['background', 'image_url'] },
        {
          name: 'title',
          tag: 'p',
          type: 'text',
          current_text: '{{ word }}',
          modifiable: ['text', 'color', 'background', 'image_url', 'hidden'],
        },
        { name: 'logo', tag: 'img', type: 'image', modifiable: ['image_url', 'hidden'] },
      ],
      warnings: ['Layer name "title" is used by 2 elements; a modification of it applies to all of them.'],
    });
    expect((await t.request('GET', `/v1/templates/${id}/layers`, { apiKey: bob.apiKey })).status).toBe(403);
    expect((await t.request('GET', '/v1/templates/nonexistent1/layers', { apiKey: alice.apiKey })).status).toBe(404);

    // Generated clients (TemplateFox's SDK and MCP server) call these operations by name.
    const openapi = (await t.request('GET', '/openapi.json')).body;
    expect(openapi.paths['/v1/templates/{template_id}/layers'].get.operationId).toBe('getTemplateLayers');
    expect(openapi.paths['/v1/image/create'].post.operationId).toBe('createImage');
    expect(openapi.paths['/v1/templates'].get.parameters).toContainEqual(
      expect.objectContaining({ name: 'kind', in: 'query' }),
    );
  });

  it('renders png, jpeg and webp at the asked pixel width (height from the canvas), as a download link or bytes, one credit each', async () => {
    const id = await newTemplate({ html: TITLE_CARD, kind: 'image', canvas: { width: 200, height: 100 } });
    const before = await balance();

    const png = await createImage({ template_id: id, data: { word: 'Hi' }, width: 300, filename: 'card' });
    expect(png.status, JSON.stringify(png.body)).toBe(200);
    expect(png.body).toEqual({
      url: expect.stringContaining('/v1/files/'),
      filename: 'card.png',
      credits_remaining: before - 1,
      expires_in: 86_400,
    });
    const download = await fetch(png.body.url);
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('image/png');
    expect(imageInfo(Buffer.from(await download.arrayBuffer()))).toEqual({ format: 'png', width: 300, height: 150 });

    const jpeg = await binaryImage({ template_id: id, data: { word: 'Hi' }, format: 'jpeg', width: 100, quality: 40 });
    expect(jpeg.headers.get('content-type')).toBe('image/jpeg');
    expect(jpeg.headers.get('content-disposition')).toContain('document.jpg');
    expect(imageInfo(jpeg.bytes)).toEqual({ format: 'jpeg', width: 100, height: 50 });

    const webp = await binaryImage({ template_id: id, data: { word: 'Hi' }, format: 'webp', width: 400 });
    expect(webp.headers.get('content-type')).toBe('image/webp');
    expect(imageInfo(webp.bytes)).toEqual({ format: 'webp', width: 400, height: 200 });

    // Without width: the canvas's own size.
    const native = await binaryImage({ template_id: id, data: { word: 'Hi' } });
    expect(imageInfo(native.bytes)).toEqual({ format: 'png', width: 200, height: 100 });
    expect(await balance()).toBe(before - 4);

    // An Idempotency-Key replays the first answer, charged once.
    const headers = { 'idempotency-key': `img-${dialect}` };
    const first = await createImage(
      { template_id: id, data: { word: 'Hi' }, modifications: [{ name: 'nope', text: 'x' }] },
      { headers },
    );
    const again = await createImage(
      { template_id: id, data: { word: 'Hi' }, modifications: [{ name: 'nope', text: 'x' }] },
      { headers },
    );
    expect(again.body).toEqual(first.body);
    expect(first.body.warnings).toEqual(['Layer "nope" was not found in the template; its modification was skipped.']);
    expect(await balance()).toBe(before - 5);
  });

  it("changes a layer's text, colour, background and visibility, as the pixels show against the unmodified render", async () => {
    const id = await newTemplate({ html: TITLE_CARD, kind: 'image', canvas: { width: 200, height: 100 } });
    const plain = decodePng((await binaryImage({ template_id: id, data: { word: 'i' } })).bytes);
    const plainAgain = decodePng((await binaryImage({ template_id: id, data: { word: 'i' } })).bytes);
    const darkPlain = countPixels(plain, isDark);
    expect(darkPlain).toBeGreaterThan(0);
    // The same render twice gives the same pixels: the differences below come from the modifications.
    expect(countPixels(plainAgain, isDark)).toBe(darkPlain);
    expect(countPixels(plain, isRed)).toBe(0);

    const red = await binaryImage({
      template_id: id,
      data: { word: 'i' },
      modifications: [
        { name: 'title', text: 'WWW', color: '#ff0000' },
        { name: 'ghost', hidden: true },
      ],
    });
    expect(JSON.parse(red.headers.get('x-warnings') ?? '[]')).toEqual([
      'Layer "ghost" was not found in the template; its modification was skipped.',
    ]);
    const redPng = decodePng(red.bytes);
    expect(countPixels(redPng, isRed)).toBeGreaterThan(3 * darkPlain);
    expect(countPixels(redPng, isDark)).toBe(0);

    const hidden = decodePng(
      (
        await binaryImage({
          template_id: id,
          data: { word: 'i' },
          modifications: [
            { name: 'title', hidden: true },
            { name: 'background', background: 'navy' },
          ],
        })
      ).bytes,
    );
    // Navy everywhere: the background took the colour and the hidden text left no pixel behind.
    expect(countPixels(hidden, ([r, g, b]) => r === 0 && g === 0 && b === 128)).toBe(hidden.width * hidden.height);
  });

  it('loads image_url through the outbound guard (data: URLs as they are; failures are warnings) while the page itself reaches nothing', async () => {
    const id = await newTemplate({
      html: GALLERY(`${assetsUrl}/direct.png`),
      kind: 'image',
      canvas: { width: 200, height: 100 },
    });
    const blue = `data:image/png;base64,${solidPng(4, 4, [0, 0, 255]).toString('base64')}`;
    assetRequests.length = 0;
    const res = await binaryImage({
      template_id: id,
      modifications: [
        { name: 'logo', image_url: `${assetsUrl}/red.png` },
        { name: 'badge', image_url: blue },
        { name: 'box', image_url: `${assetsUrl}/missing.png` },
      ],
    });
    const png = decodePng(res.bytes);
    expect(png.pixel(50, 50).slice(0, 3)).toEqual([255, 0, 0]);
    expect(png.pixel(150, 50).slice(0, 3)).toEqual([0, 0, 255]);
    // The layer that kept its image, then the template's own loopback <img>, blocked and said so.
    const warnings: string[] = JSON.parse(res.headers.get('x-warnings') ?? '[]');
    expect(warnings[0]).toBe(
      'Layer "box": image_url was not loaded (the server answered HTTP 404); the layer keeps its image.',
    );
    expect(warnings.slice(1)).toEqual([expect.stringContaining('/direct.png')]);
    // The service fetched the two URLs it was given; the template's own <img src> never left the page.
    expect(assetRequests.sort()).toEqual(['/missing.png', '/red.png']);
  });

  it("runs a template's script (its drawing is in the image) while the page reaches nothing; stores an image in the customer bucket", async () => {
    const scripted = await newTemplate({
      html: SCRIPTED(assetsUrl),
      kind: 'image',
      canvas: { width: 200, height: 100 },
    });
    assetRequests.length = 0;
    const drawn = decodePng((await binaryImage({ template_id: scripted, width: 100 })).bytes);
    expect(countPixels(drawn, ([r, g, b]) => r === 0 && g === 128 && b === 0)).toBe(drawn.width * drawn.height);
    expect(assetRequests).toEqual([]);
    // Modifications apply once the script has drawn (pressroomReady settled): they have the last word.
    const modified = decodePng(
      (
        await binaryImage({
          template_id: scripted,
          width: 100,
          modifications: [{ name: 'box', background: '#ff0000' }],
        })
      ).bytes,
    );
    expect(countPixels(modified, ([r, g, b]) => r === 255 && g === 0 && b === 0)).toBe(
      modified.width * modified.height,
    );

    const settings = {
      endpoint_url: s3.endpoint,
      access_key_id: S3_KEY,
      secret_access_key: S3_SECRET,
      bucket_name: 'images',
      default_prefix: 'cards',
    };
    expect((await t.request('POST', '/v1/integrations/s3', { apiKey: alice.apiKey, body: settings })).body).toEqual({
      success: true,
    });
    const stored = await createImage({
      template_id: scripted,
      store_s3: true,
      format: 'webp',
      filename: 'launch',
      width: 120,
    });
    expect(stored.status, JSON.stringify(stored.body)).toBe(200);
    expect(stored.body).toMatchObject({ s3_bucket: 'images', s3_key: 'cards/launch.webp', filename: 'launch.webp' });
    expect(imageInfo((await s3.readObject('images', 'cards/launch.webp'))!)).toEqual({
      format: 'webp',
      width: 120,
      height: 60,
    });
    await t.request('DELETE', '/v1/integrations/s3', { apiKey: alice.apiKey });
  });

  it('shares the per-account rate limit with every other call: over it, 429 before anything is looked up, charging nothing', async () => {
    const id = await newTemplate({ html: TITLE_CARD, kind: 'image', canvas: { width: 200, height: 100 } });
    const tight = await t.createAccount({ credits: 5, rate_limit: { per_minute: 1 } });
    expect((await t.request('GET', '/v1/account', { apiKey: tight.apiKey })).status).toBe(200);
    const credits = await balance();
    const limited = await createImage({ template_id: id, width: 100 }, { apiKey: tight.apiKey });
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('RATE_LIMITED');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    const charges = await t.services.database.db
      .selectFrom('credit_transactions')
      .select('transaction_type')
      .where('transaction_type', 'in', ['PDFGEN', 'REFUND'])
      .where('account_id', 'in', [tight.accountId, alice.accountId])
      .where('template_id', '=', id)
      .execute();
    expect(charges).toEqual([]);
    expect(await balance()).toBe(credits);
  });

  it('every error path charges nothing', async () => {
    const id = await newTemplate({ html: TITLE_CARD, kind: 'image', canvas: { width: 200, height: 100 } });
    const tall = await newTemplate({ html: '<p>tall</p>', kind: 'image', canvas: { width: 100, height: 5000 } });
    const pdfId = await newTemplate({ html: '<p>pdf</p>' });
    const broken = await newTemplate({
      html: 'one\n{{ undefined_function() }}',
      kind: 'image',
      canvas: { width: 100, height: 100 },
    });
    const bobsId = await newTemplate({ html: '<p>bob</p>', kind: 'image' }, bob.apiKey);
    const credits = await balance();
    const entries = await ledgerSize();

    const refused: Array<[Record<string, unknown>, number, string | (string | number)[]]> = [
      [{ template_id: 'nonexistent1' }, 404, 'TEMPLATE_NOT_FOUND'],
      [{ template_id: bobsId }, 403, 'FORBIDDEN'],
      [{ template_id: pdfId, format: 'webp' }, 422, ['body', 'format']],
      [{ template_id: pdfId, width: 4000 }, 422, ['body', 'width']],
      [{ template_id: id, page: 1 }, 422, ['body', 'page']],
      [{ template_id: id, version: 'nope' }, 404, 'VERSION_NOT_FOUND'],
      [{ template_id: id, store_s3: true }, 400, 'INVALID_REQUEST'],
      [
        { template_id: id, modifications: [{ name: 'title', color: 'red; position: fixed' }] },
        422,
        ['body', 'modifications', 0, 'color'],
      ],
      [
        { template_id: id, modifications: [{ name: 'title', background: 'url(x)' }] },
        422,
        ['body', 'modifications', 0, 'background'],
      ],
      [
        { template_id: id, modifications: [{ name: 'title', image_url: 'file:///etc/passwd' }] },
        422,
        ['body', 'modifications', 0, 'image_url'],
      ],
      [{ template_id: id, modifications: [{ text: 'no name' }] }, 422, ['body', 'modifications', 0, 'name']],
      [
        { template_id: id, modifications: Array.from({ length: 101 }, () => ({ name: 'title' })) },
        422,
        ['body', 'modifications'],
      ],
      [{ template_id: id, width: 99 }, 422, ['body', 'width']],
      [{ template_id: id, width: 4001 }, 422, ['body', 'width']],
      [{ template_id: tall, width: 4000 }, 422, ['body', 'width']],
      [{ template_id: id, format: 'gif' }, 422, ['body', 'format']],
      [{ template_id: id, quality: 0 }, 422, ['body', 'quality']],
      [{ template_id: id, pdf_variant: 'pdf/a-2b' }, 422, ['body', 'pdf_variant']],
      [{ template_id: id, webhook_url: 'https://hooks.example.com/x' }, 422, ['body', 'webhook_url']],
      [{ template_id: id, store_s3: true, export_type: 'binary' }, 422, ['body', 'export_type']],
    ];
    for (const [body, status, expected] of refused) {
      const res = await createImage(body);
      expect(res.status, JSON.stringify(body).slice(0, 120)).toBe(status);
      if (typeof expected === 'string') expect(res.body.error).toBe(expected);
      else expect(res.body.detail.map((d: { loc: unknown }) => d.loc)).toContainEqual(expected);
    }
    expect(await balance()).toBe(credits);
    expect(await ledgerSize()).toBe(entries);

    // A template that fails while rendering is charged and refunded: the balance stands.
    const failed = await createImage({ template_id: broken });
    expect(failed.status).toBe(422);
    expect(failed.body).toMatchObject({ error: 'TEMPLATE_RENDER_ERROR', line: 2 });
    expect(await balance()).toBe(credits);

    // No credits: 402 before anything is rendered.
    const poor = await createImage({ template_id: bobsId }, { apiKey: bob.apiKey });
    expect(poor.status).toBe(402);
    expect(poor.body.error).toBe('INSUFFICIENT_CREDITS');
    expect(await balance(bob.apiKey)).toBe(0);
  });

  /**
   * Issue 37, case 3: a template evaluating to thousands of layers, with modifications, blocked the
   * service's thread (parse5 over its output: 27 s for 400,000 layers and 100 unknown names), and so
   * did listing the layers of a large template. `heavy` starts first; /healthz is asked while it is in
   * flight and must answer, 200, before it settles (events, not times).
   */
  const answeredWhileInFlight = async (heavy: Promise<TestResponse>): Promise<TestResponse> => {
    let settled = false;
    heavy.then(
      () => (settled = true),
      () => (settled = true),
    );
    const health = await t.request('GET', '/healthz');
    expect(health.status).toBe(200);
    expect(settled, '/healthz answered only after the heavy request').toBe(false);
    return heavy;
  };

  it('bounds layer work and keeps the service answering while it runs: past the layer bound a 422 that charges nothing, within it 100 modifications render', async () => {
    const canvas = { width: 200, height: 100 };
    const loop = (n: number) =>
      `<html><body style="margin:0;font-size:1px">{% for i in range(${n}) %}<b data-layer="l{{ i }}" id="i{{ i }}">x</b>{% endfor %}</body></html>`;
    const many = await newTemplate({ html: loop(20 * MAX_TEMPLATE_LAYERS), kind: 'image', canvas });
    const enough = await newTemplate({ html: loop(MAX_TEMPLATE_LAYERS), kind: 'image', canvas });
    const unknown = Array.from({ length: MAX_MODIFICATIONS }, (_, i) => ({ name: `nope${i}`, text: 'y' }));
    const credits = await balance();

    const refused = await answeredWhileInFlight(createImage({ template_id: many, modifications: unknown }));
    expect(refused.status, JSON.stringify(refused.body)).toBe(422);
    expect(refused.body).toMatchObject({ error: 'DOCUMENT_TOO_LARGE', bound: 'layers' });
    expect(refused.body.message).toContain(`The template produced ${20 * MAX_TEMPLATE_LAYERS} layers`);
    expect(refused.body.message).toContain(`at most ${MAX_TEMPLATE_LAYERS}`);
    expect(await balance()).toBe(credits);
    // One real layer is refused the same: the bound is on the template's layers, not on the names asked for.
    expect((await createImage({ template_id: many, modifications: [{ name: 'l5', text: 'y' }] })).body).toMatchObject({
      error: 'DOCUMENT_TOO_LARGE',
      bound: 'layers',
    });
    // Without modifications the same template renders: no layer work is done.
    const plain = await answeredWhileInFlight(createImage({ template_id: many, export_type: 'binary' }));
    expect(plain.status).toBe(200);
    expect(await balance()).toBe(credits - 1);

    // At the bound: the hundred unknown names are a hundred warnings, a known one applies, one credit.
    const within = await answeredWhileInFlight(
      createImage({ template_id: enough, modifications: [...unknown.slice(1), { name: 'l5', hidden: true }] }),
    );
    expect(within.status, JSON.stringify(within.body)).toBe(200);
    expect(within.body.warnings).toHaveLength(MAX_MODIFICATIONS - 1);
    expect(within.body.warnings[0]).toBe('Layer "nope1" was not found in the template; its modification was skipped.');
    expect(await balance()).toBe(credits - 2);

    // One more modification than the bound: refused before anything, naming the bound.
    const tooMany = await createImage({ template_id: enough, modifications: [...unknown, { name: 'l5' }] });
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.detail).toEqual([
      expect.objectContaining({
        loc: ['body', 'modifications'],
        msg: expect.stringContaining(String(MAX_MODIFICATIONS)),
      }),
    ]);
    expect(await balance()).toBe(credits - 2);
  });

  it("lists layers off the service's thread: a template past the layer bound is a 422 naming it, one at the bound lists every layer", async () => {
    // Issue 37's listing: 60,000 layers written out, a 1.7 MB template.
    const literal = await newTemplate({
      html: Array.from({ length: 60_000 }, (_, i) => `<i data-layer="n${i}">x</i>`).join(''),
      kind: 'image',
      canvas: { width: 200, height: 100 },
    });
    const refused = await answeredWhileInFlight(
      t.request('GET', `/v1/templates/${literal}/layers`, { apiKey: alice.apiKey }),
    );
    expect(refused.status, JSON.stringify(refused.body).slice(0, 300)).toBe(422);
    expect(refused.body).toMatchObject({ error: 'DOCUMENT_TOO_LARGE', bound: 'layers' });
    expect(refused.body.message).toContain(`The template has 60000 layers`);
    expect(refused.body.message).toContain(`at most ${MAX_TEMPLATE_LAYERS}`);

    const atBound = await newTemplate({
      html: Array.from(
        { length: MAX_TEMPLATE_LAYERS },
        (_, i) => `<i data-layer="n${i}">${'long text '.repeat(i === 7 ? 100 : 1)}</i>`,
      ).join(''),
      kind: 'image',
    });
    const listed = await answeredWhileInFlight(
      t.request('GET', `/v1/templates/${atBound}/layers`, { apiKey: alice.apiKey }),
    );
    expect(listed.status).toBe(200);
    expect(listed.body.layers).toHaveLength(MAX_TEMPLATE_LAYERS + 1);
    expect(listed.body.layers[0].name).toBe('background');
    expect(listed.body.layers[8]).toMatchObject({ name: 'n7', type: 'text' });
    expect(listed.body.layers[8].current_text).toHaveLength(501);
    expect(listed.body.layers[8].current_text.endsWith('…')).toBe(true);
  });

  it('previews a saved image template, and a version of it, on one page of its canvas, free', async () => {
    const id = await newTemplate({
      html: TITLE_CARD,
      kind: 'image',
      canvas: { width: 200, height: 100 },
      sample_data: { word: 'Hi' },
    });
    expect(
      (await t.request('POST', `/v1/templates/${id}/versions`, { apiKey: alice.apiKey, body: { tag: 'wide' } })).status,
    ).toBe(200);
    expect(
      (
        await t.request('PUT', `/v1/templates/${id}`, {
          apiKey: alice.apiKey,
          body: { canvas: { width: 300, height: 300 } },
        })
      ).status,
    ).toBe(200);
    const before = await balance();
    const preview = async (body: Record<string, unknown>) => {
      const res = await t.request('POST', '/v1/templates/preview', {
        apiKey: alice.apiKey,
        body: { template_id: id, ...body },
      });
      expect(res.status, res.bytes.toString('utf8', 0, 300)).toBe(200);
      expect(pdfPages(res.bytes)).toBe(1);
      // CSS pixels are 3/4 of a point; Chromium rounds the paper to its own units (within 1.5 pt).
      return (/^([\d.]+) x ([\d.]+) pts/.exec(pdfInfo(res.bytes)['Page size'] ?? '') ?? []).slice(1).map(Number);
    };
    const [draftWidth, draftHeight] = await preview({});
    expect(Math.abs(draftWidth! - 225)).toBeLessThanOrEqual(1.5);
    expect(Math.abs(draftHeight! - 225)).toBeLessThanOrEqual(1.5);
    const [versionWidth, versionHeight] = await preview({ version: 'wide' });
    expect(Math.abs(versionWidth! - 150)).toBeLessThanOrEqual(1.5);
    expect(Math.abs(versionHeight! - 75)).toBeLessThanOrEqual(1.5);
    expect(await balance()).toBe(before);
  });

  it("pictures a page of a pdf template (issue 42): page n, png or jpeg, the width asked or the paper's at 96 dpi, one credit", async () => {
    const html =
      '<style>@page{margin:0} body{margin:0} .p{height:1123px;font:bold 120px sans-serif;break-after:page}</style><div class="p">{{ first }}</div><div class="p" style="background:#d00">two</div>';
    const id = await newTemplate({ html });
    const before = await balance();
    // pdftoppm rounds the height up or down by a pixel: A4 at 794 px wide is 1122.9 px high.
    const near = (width: number, height: number) => ({
      width,
      height: expect.toSatisfy((h: number) => Math.abs(h - height) <= 1),
    });
    const first = await binaryImage({ template_id: id, data: { first: 'ONE' } });
    expect(imageInfo(first.bytes)).toEqual({ format: 'png', ...near(794, 1123) });
    const firstPng = decodePng(first.bytes);
    expect(countPixels(firstPng, isDark)).toBeGreaterThan(1000);
    expect(countPixels(firstPng, isRed)).toBe(0);
    const second = await binaryImage({ template_id: id, data: { first: 'ONE' }, page: 2, width: 400 });
    expect(imageInfo(second.bytes)).toEqual({ format: 'png', ...near(400, 566) });
    expect(countPixels(decodePng(second.bytes), isRed)).toBeGreaterThan(0.9 * 400 * 566);
    const jpeg = await createImage({
      template_id: id,
      data: { first: 'ONE' },
      format: 'jpeg',
      quality: 60,
      width: 300,
    });
    expect(jpeg.status, JSON.stringify(jpeg.body)).toBe(200);
    expect(jpeg.body.filename).toBe('document.jpg');
    const link = new URL(jpeg.body.url);
    expect(imageInfo((await t.request('GET', link.pathname + link.search)).bytes)).toEqual({
      format: 'jpeg',
      ...near(300, 424),
    });
    expect(await balance()).toBe(before - 3);
    // A page past the last is known once the document is printed: a 422 at body.page, the credit given back.
    const past = await createImage({ template_id: id, data: { first: 'ONE' }, page: 3 });
    expect(past.status).toBe(422);
    expect(past.body.detail).toEqual([
      { loc: ['body', 'page'], msg: 'the document has 2 pages; ask for one of them', type: 'value_error' },
    ]);
    expect(await balance()).toBe(before - 3);
  });

  it("skips modifications on a pdf template's page, a warning per name, as TemplateFox skips names no layer has (issue 50)", async () => {
    const id = await newTemplate({ html: '<h1>{{ title }}</h1>' });
    const before = await balance();
    const res = await createImage({
      template_id: id,
      data: { title: 'Summer sale' },
      width: 400,
      modifications: [
        { name: 'headline', text: 'Winter' },
        { name: 'logo', hidden: true },
      ],
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.warnings).toEqual([
      expect.stringContaining('Layer "headline" was not found'),
      expect.stringContaining('Layer "logo" was not found'),
    ]);
    expect(res.body.warnings[0]).toContain('its modification was skipped');
    const link = new URL(res.body.url);
    expect(imageInfo((await t.request('GET', link.pathname + link.search)).bytes)).toMatchObject({
      format: 'png',
      width: 400,
    });
    expect(await balance()).toBe(before - 1);
  });

  it("checks a page picture's pixels on the page as printed: a CSS @page past the bound is a 422 at body.width, the credit given back (issue 49)", async () => {
    const id = await newTemplate({ html: '<style>@page{size:8in 200in;margin:0}</style><p>long</p>' });
    const before = await balance();
    const res = await createImage({ template_id: id, width: 2000 });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body.detail).toEqual([
      expect.objectContaining({ loc: ['body', 'width'], msg: expect.stringContaining('2000 × 50000') }),
    ]);
    expect(await balance()).toBe(before);
    expect((await t.request('GET', '/healthz')).status).toBe(200);
  });

  it('a version keeps the kind it was saved with', async () => {
    const id = await newTemplate({ html: TITLE_CARD, kind: 'image', canvas: { width: 200, height: 100 } });
    expect(
      (await t.request('POST', `/v1/templates/${id}/versions`, { apiKey: alice.apiKey, body: { tag: 'launch' } }))
        .status,
    ).toBe(200);
    expect(
      (await t.request('PUT', `/v1/templates/${id}`, { apiKey: alice.apiKey, body: { kind: 'pdf' } })).status,
    ).toBe(200);
    // The draft is a pdf template now: its page is pictured (A4 at 96 dpi), the version still renders its canvas.
    expect(imageInfo((await binaryImage({ template_id: id, data: { word: 'v' } })).bytes)).toMatchObject({
      format: 'png',
      width: 794,
    });
    const pinned = await binaryImage({ template_id: id, version: 'launch', data: { word: 'v' }, width: 100 });
    expect(imageInfo(pinned.bytes)).toEqual({ format: 'png', width: 100, height: 50 });
  });
});
