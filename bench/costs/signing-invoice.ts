/**
 * What does `sign` add to the example invoice? Starts the service in process (SQLite, test settings),
 * saves examples/invoice as `render.mjs` does, uploads a certificate made with OpenSSL, then asks for
 * the invoice N times without finishing and N times with `sign` (B-B, no TSA), alternating, and prints
 * wall p50 ms per kind and the process's CPU ms per document of each kind (the service and Chromium's
 * own processes are not separated: CPU here is this process's, where libpdf runs).
 *
 *   node --import tsx bench/costs/signing-invoice.ts [--n 10]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createSigningKit } from '../../test/support/documents/signing-kit.js';
import { startTestApp } from '../../test/support/test-app.js';

const args = process.argv.slice(2);
const N = args.includes('--n') ? Number(args[args.indexOf('--n') + 1]) || 10 : 10;
const here = join(import.meta.dirname, '../../examples/invoice');
const fonts = '/usr/share/fonts/truetype/noto';

const kit = createSigningKit();
const t = await startTestApp('sqlite');
const { apiKey } = await t.createAccount({ credits: 1000, plan: 'enterprise' });
const call = async (method: string, path: string, body: unknown) => {
  const res = await t.request(method, path, { apiKey, body });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.bytes.toString().slice(0, 300)}`);
  return res;
};
for (const [name, file] of [
  ['invoice/logo.svg', join(here, 'logo.svg')],
  ['invoice/brand.ttf', join(fonts, 'NotoSerifDisplay-Regular.ttf')],
  ['invoice/brand-bold.ttf', join(fonts, 'NotoSerifDisplay-Bold.ttf')],
] as const) {
  await call('POST', '/v1/assets', { name, content_base64: readFileSync(file).toString('base64') });
}
const { id } = (
  await call('POST', '/v1/templates', {
    name: 'Rechnung (bench)',
    html: readFileSync(join(here, 'template.html'), 'utf8'),
    css: readFileSync(join(here, 'template.css'), 'utf8'),
    page: { format: 'A4', margin: { top: '16mm', right: '16mm', bottom: '22mm', left: '18mm' } },
  })
).body;
await call('POST', '/v1/certificates', {
  name: 'bench',
  pkcs12_base64: kit.pkcs12({ cn: 'Bench', password: 'pw' }).toString('base64'),
  password: 'pw',
});
const data = JSON.parse(readFileSync(join(here, 'data.json'), 'utf8'));

const kinds = { plain: {}, signed: { sign: { certificate: 'bench', reason: 'Issued' } } } as const;
const walls: Record<string, number[]> = { plain: [], signed: [] };
const cpu: Record<string, number> = { plain: 0, signed: 0 };
for (let warm = 0; warm < 2; warm++)
  for (const extra of Object.values(kinds))
    await call('POST', '/v1/pdf/create', { template_id: id, data, export_type: 'binary', ...extra });
for (let i = 0; i < N; i++) {
  for (const [kind, extra] of Object.entries(kinds)) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    await call('POST', '/v1/pdf/create', { template_id: id, data, export_type: 'binary', ...extra });
    walls[kind]!.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu[kind]! += (c.user + c.system) / 1000;
  }
}
const p50 = (xs: number[]) => Math.round([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!);
console.log(
  JSON.stringify({
    n: N,
    plainWallP50Ms: p50(walls.plain!),
    signedWallP50Ms: p50(walls.signed!),
    ratio: +(p50(walls.signed!) / p50(walls.plain!)).toFixed(2),
    plainCpuMs: Math.round(cpu.plain! / N),
    signedCpuMs: Math.round(cpu.signed! / N),
  }),
);
await t.close();
kit.close();
