/**
 * What a cached remote image costs (issue 13): the same invoice-sized document with one PNG logo, once as a `data:` URI in the HTML and once as `http://127.0.0.1:<port>/logo.png` served by a
 * loopback server with `Cache-Control: max-age=3600` (named in PRESSROOM_REMOTE_RESOURCES),
 * rendered by an in-process service over HTTP, interleaved A/B after a warm-up. The first remote
 * render fills the shared cache; every later one is answered from it. Prints p50 and p90 of each
 * and of the difference, and how often the loopback server was asked.
 *
 *   node --import tsx bench/costs/remote-image.ts [--n 40]
 */
import { createServer } from 'node:http';
import { deflateSync } from 'node:zlib';
import { startTestApp } from '../../test/support/test-app.js';

const n = Number(process.argv[process.argv.indexOf('--n') + 1] || 40) || 40;

/** A 200×200 RGB PNG of sparse noise, built without a library (its size is printed). */
function noisePng(): Buffer {
  const width = 200;
  const height = 200;
  const raw = Buffer.alloc((width * 3 + 1) * height);
  let seed = 7;
  for (let i = 0; i < raw.length; i++)
    raw[i] = i % (width * 3 + 1) === 0 ? 0 : (seed = (seed * 1103515245 + 12345) & 0x7fffffff) % 7 === 0 ? 255 : 40;
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.writeUInt8(8, 8);
  header.writeUInt8(2, 9);
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(raw)),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function crc32(data: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

const png = noisePng();
let served = 0;
const images = createServer((_req, res) => {
  served += 1;
  res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'max-age=3600', 'content-length': png.length });
  res.end(png);
});
await new Promise<void>((resolve) => images.listen(0, '127.0.0.1', resolve));
const port = (images.address() as { port: number }).port;

const t = await startTestApp('sqlite', {
  PRESSROOM_REMOTE_RESOURCES: `on,127.0.0.1:${port}`,
  PRESSROOM_RENDER_CONCURRENCY: '1',
});
try {
  const account = await t.createAccount({
    credits: 10 * n + 20,
    plan: 'enterprise',
    rate_limit: { per_minute: 100_000, per_day: 1_000_000 },
  });
  const rows = Array.from(
    { length: 12 },
    (_, i) => `<tr><td>Item ${i + 1}</td><td>{{ qty }}</td><td>{{ price }}</td></tr>`,
  ).join('');
  const body = (src: string) => `<img src="${src}" width="120"><h1>Invoice {{ number }}</h1><table>${rows}</table>`;
  const make = async (name: string, src: string) =>
    (await t.request('POST', '/v1/templates', { apiKey: account.apiKey, body: { name, html: body(src) } })).body
      .id as string;
  const inline = await make('data URI', `data:image/png;base64,${png.toString('base64')}`);
  const remote = await make('remote', `http://127.0.0.1:${port}/logo.png`);
  const render = async (id: string) => {
    const started = performance.now();
    const res = await t.request('POST', '/v1/pdf/create', {
      apiKey: account.apiKey,
      body: { template_id: id, data: { number: 'RE-1', qty: 2, price: 9.5 }, export_type: 'binary' },
    });
    if (
      res.status !== 200 ||
      (res.headers.get('x-pressroom-warnings') !== null && res.headers.get('x-pressroom-warnings') !== '0')
    ) {
      throw new Error(
        `render failed or warned: ${res.status} ${res.headers.get('x-pressroom-warnings-details') ?? JSON.stringify(res.body)}`,
      );
    }
    return performance.now() - started;
  };
  for (let i = 0; i < 5; i++) {
    await render(inline);
    await render(remote);
  }
  const a: number[] = [];
  const b: number[] = [];
  const diff: number[] = [];
  for (let i = 0; i < n; i++) {
    // Alternate which goes first, so a drift in machine load hits both alike.
    let x: number;
    let y: number;
    if (i % 2 === 0) {
      x = await render(inline);
      y = await render(remote);
    } else {
      y = await render(remote);
      x = await render(inline);
    }
    a.push(x);
    b.push(y);
    diff.push(y - x);
  }
  const f = (v: number) => v.toFixed(1);
  console.log(`PNG ${png.length} bytes, n=${n} pairs, loopback server asked ${served} time(s)`);
  console.log(`data: URI      p50 ${f(quantile(a, 0.5))} ms  p90 ${f(quantile(a, 0.9))} ms`);
  console.log(`cached remote  p50 ${f(quantile(b, 0.5))} ms  p90 ${f(quantile(b, 0.9))} ms`);
  console.log(
    `remote − data: p50 ${f(quantile(diff, 0.5))} ms  p10 ${f(quantile(diff, 0.1))} ms  p90 ${f(quantile(diff, 0.9))} ms`,
  );
} finally {
  await t.close();
  images.close();
}
