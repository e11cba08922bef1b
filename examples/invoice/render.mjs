#!/usr/bin/env node
/**
 * Renders the example invoice through a running Pressroom and writes its PDF and a picture of its
 * first page (the README's). Uses only the public API: uploads the logo and the brand font as assets,
 * saves the template, generates.
 *
 *   PRESSROOM_URL=http://localhost:8080 API_KEY=pr_… node examples/invoice/render.mjs [out-dir]
 *
 * The brand font is Noto Serif Display from Debian's fonts-noto-core (installed by scripts/setup.sh).
 * The picture needs pdftoppm (poppler-utils). Costs one credit.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const here = new URL('.', import.meta.url).pathname;
const base = (process.env.PRESSROOM_URL ?? 'http://localhost:8080').replace(/\/$/, '');
const key = process.env.API_KEY;
if (!key) throw new Error('API_KEY is required (an API key of the running service)');
const out = process.argv[2] ?? join(here, 'out');
mkdirSync(out, { recursive: true });

async function call(method, path, body) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: body && JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res;
}

const fonts = '/usr/share/fonts/truetype/noto';
const assets = {
  'invoice/logo.svg': readFileSync(join(here, 'logo.svg')),
  'invoice/brand.ttf': readFileSync(join(fonts, 'NotoSerifDisplay-Regular.ttf')),
  'invoice/brand-bold.ttf': readFileSync(join(fonts, 'NotoSerifDisplay-Bold.ttf')),
};
for (const [name, bytes] of Object.entries(assets))
  await call('POST', '/v1/assets', { name, content_base64: bytes.toString('base64') });

const template = {
  name: 'Rechnung (example)',
  html: readFileSync(join(here, 'template.html'), 'utf8'),
  css: readFileSync(join(here, 'template.css'), 'utf8'),
  page: {
    format: 'A4',
    margin: { top: '16mm', right: '16mm', bottom: '22mm', left: '18mm' },
    footer_html:
      '<div style="font-family: Brand; font-size: 8pt; color: #1f4e79; width: 100%; text-align: center">Nordlicht Design GmbH · Seite <span class="pageNumber"></span> von <span class="totalPages"></span></div>',
  },
};
const { id } = await (await call('POST', '/v1/templates', template)).json();
const data = JSON.parse(readFileSync(join(here, 'data.json'), 'utf8'));
const res = await call('POST', '/v1/pdf/create', {
  template_id: id,
  data,
  export_type: 'binary',
  filename: 'rechnung',
});
const warnings = res.headers.get('x-pressroom-warnings');
if (warnings && warnings !== '0')
  console.error(`warnings: ${warnings} ${res.headers.get('x-pressroom-warnings-details') ?? ''}`);
const pdf = Buffer.from(await res.arrayBuffer());
writeFileSync(join(out, 'invoice.pdf'), pdf);
execFileSync('pdftoppm', [
  '-png',
  '-r',
  '80',
  '-f',
  '1',
  '-l',
  '1',
  '-singlefile',
  join(out, 'invoice.pdf'),
  join(out, 'invoice'),
]);
console.log(`${join(out, 'invoice.pdf')} (${pdf.length} bytes), ${join(out, 'invoice.png')}`);
