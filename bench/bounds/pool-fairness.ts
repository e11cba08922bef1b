/**
 * `node --import tsx bench/bounds/pool-fairness.ts`: does one account's hostile work in the qpdf or xmllint
 * pool make another account wait? (issue 37 case 4; test/e2e/jobs/pool-fairness.test.ts asserts the order,
 * this measures the wait.)
 *
 * Starts one `serve` (SQLite, a temporary data directory) from `--app` (default: this checkout's
 * dist/, so `npm run build` first; point it at another checkout's root to measure that one), with
 * PRESSROOM_PDF_TOOLS_CONCURRENCY=2, creates accounts A and B through the admin API, then for each
 * scenario sends A's requests at once, waits `--head-start` seconds (A's work reaches the pool) and
 * times B's one request:
 *   qpdf     A: `--merges` (2) merges of a PDF whose content inflates to `--bomb-mib` (640) MiB of hex
 *            text (Flate over ASCIIHex) and a one-page PDF, with a `--tool-timeout-ms` (15000) deadline;
 *            B: a one-page rotate;
 *   xmllint  A: `--documents` (4) Factur-X MINIMUM CII documents (`einvoice.xml`) with `--attributes`
 *            (200000) attributes the schema does not allow; B: a valid MINIMUM invoice (`einvoice.invoice`).
 * Out: B's latency and status, how many of A's requests were still pending when B was answered, A's
 * statuses and the time each took, the charges, and the machine's load average before and after.
 */
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { ADMIN_TOKEN, freePort, startAppServer, stopAppServer } from '../app-server.js';
import { parseArgs } from 'node:util';
import { createDeflate } from 'node:zlib';
import { PDFDocument, StandardFonts } from '@cantoo/pdf-lib';
import { buildEInvoice } from '../../src/einvoice/einvoice.js';
import { SAMPLE_INVOICE } from '../../test/support/documents/einvoice-samples.js';

const { values: args } = parseArgs({
  options: {
    app: { type: 'string', default: '.' },
    scenario: { type: 'string', multiple: true, default: ['qpdf', 'xmllint'] },
    merges: { type: 'string', default: '2' },
    'bomb-mib': { type: 'string', default: '640' },
    'tool-timeout-ms': { type: 'string', default: '15000' },
    documents: { type: 'string', default: '4' },
    attributes: { type: 'string', default: '200000' },
    'head-start': { type: 'string', default: '2' },
  },
});
const APP = resolve(args.app);

function log(message: string): void {
  process.stderr.write(`[pool-fairness] ${message}\n`);
}

async function call(
  base: string,
  path: string,
  init: { apiKey?: string; bearer?: string; body?: unknown },
): Promise<{ status: number; json: Record<string, unknown> | undefined }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (init.apiKey) headers['x-api-key'] = init.apiKey;
  if (init.bearer) headers.authorization = `Bearer ${init.bearer}`;
  const res = await fetch(`${base}${path}`, {
    method: init.body === undefined ? 'GET' : 'POST',
    headers,
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  const json = res.headers.get('content-type')?.includes('json')
    ? (JSON.parse(bytes.toString()) as Record<string, unknown>)
    : undefined;
  return { status: res.status, json };
}

async function createAccount(base: string): Promise<string> {
  const res = await call(base, '/v1/admin/accounts', {
    bearer: ADMIN_TOKEN,
    body: { credits: 100, plan: 'enterprise' },
  });
  if (res.status !== 201) throw new Error(`account creation: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json!.api_key as string;
}

/** A one-page PDF whose content stream inflates to `mib` MiB of hex text. */
async function inflatingPdf(mib: number): Promise<Buffer> {
  const deflate = createDeflate({ level: 9 });
  const parts: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => parts.push(chunk));
  const ended = new Promise((done) => deflate.on('end', done));
  const zeros = Buffer.alloc(1024 * 1024, '0');
  for (let i = 0; i < mib; i++) if (!deflate.write(zeros)) await new Promise((done) => deflate.once('drain', done));
  deflate.end();
  await ended;
  const stream = Buffer.concat(parts);
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 400] /Contents 4 0 R >>',
  ];
  let out = Buffer.from('%PDF-1.7\n');
  const offsets: number[] = [];
  for (const [i, body] of objects.entries()) {
    offsets.push(out.length);
    out = Buffer.concat([out, Buffer.from(`${i + 1} 0 obj\n${body}\nendobj\n`)]);
  }
  offsets.push(out.length);
  out = Buffer.concat([
    out,
    Buffer.from(`4 0 obj\n<< /Length ${stream.length} /Filter [/FlateDecode /ASCIIHexDecode] >>\nstream\n`),
    stream,
    Buffer.from('\nendstream\nendobj\n'),
  ]);
  const xref = out.length;
  const table = `xref\n0 5\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  return Buffer.concat([out, Buffer.from(`${table}trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`)]);
}

async function onePage(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc
    .addPage([300, 400])
    .drawText('page 1', { x: 30, y: 300, size: 18, font: await doc.embedFont(StandardFonts.Helvetica) });
  return Buffer.from(await doc.save());
}

/** A's requests at once, a head start, then B's one request: what B waited and what A got. */
async function contend(
  label: string,
  flood: () => Promise<{ status: number }>[],
  victim: () => Promise<{ status: number; json?: unknown }>,
): Promise<void> {
  const startedAt = performance.now();
  let pending = 0;
  const aTimes: string[] = [];
  const aRequests = flood().map((request) => {
    pending += 1;
    return request.then((res) => {
      pending -= 1;
      aTimes.push(`${res.status} after ${((performance.now() - startedAt) / 1000).toFixed(1)} s`);
      return res;
    });
  });
  await new Promise((done) => setTimeout(done, Number(args['head-start']) * 1000));
  const bStarted = performance.now();
  const b = await victim();
  const bMs = performance.now() - bStarted;
  const pendingAtB = pending;
  await Promise.all(aRequests);
  console.log(
    `${label}: B answered ${b.status} in ${(bMs / 1000).toFixed(2)} s, with ${pendingAtB} of A's ${aRequests.length} requests still pending; A: ${aTimes.join(', ')}`,
  );
  if (b.status !== 200) console.log(`${label}: B's answer ${JSON.stringify(b.json).slice(0, 300)}`);
}

async function main(): Promise<void> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'pool-fairness-'));
  const base = `http://127.0.0.1:${port}`;
  log(
    `load average before: ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  const server = await startAppServer({
    app: APP,
    port,
    dataDir,
    env: {
      PRESSROOM_PDF_TOOLS_CONCURRENCY: '2', // the setting of older builds; builds since issue 38 run one qpdf per core
      PRESSROOM_PDF_TOOLS_TIMEOUT_MS: args['tool-timeout-ms']!,
    },
  });
  try {
    const [a, b] = [await createAccount(base), await createAccount(base)];
    const scenarios = args.scenario as string[];
    if (scenarios.includes('qpdf')) {
      const [bomb, page] = [await inflatingPdf(Number(args['bomb-mib'])), await onePage()];
      log(`qpdf: the inflating PDF is ${Math.round(bomb.length / 1024)} KiB`);
      const tool = (apiKey: string, name: string, body: object) =>
        call(base, `/v1/pdf-tools/${name}`, { apiKey, body: { ...body, export_type: 'binary' } });
      await contend(
        `qpdf (${args.merges} merges of the ${args['bomb-mib']} MiB PDF, ${args['tool-timeout-ms']} ms deadline)`,
        () =>
          Array.from({ length: Number(args.merges) }, () =>
            tool(a, 'merge', {
              pdfs: [{ pdf_base64: bomb.toString('base64') }, { pdf_base64: page.toString('base64') }],
            }),
          ),
        () => tool(b, 'rotate', { pdf_base64: page.toString('base64'), rotation: 90 }),
      );
    }
    if (scenarios.includes('xmllint')) {
      const template = async (apiKey: string) =>
        (
          await call(base, '/v1/templates', {
            apiKey,
            body: { name: 'invoice', html: '<h1>Invoice {{ einvoice.invoice.number }}</h1>' },
          })
        ).json!.id as string;
      const [aTemplate, bTemplate] = [await template(a), await template(b)];
      // The XML the service builds for the sample invoice (built here: no XML check runs for that), with A's attributes.
      const facturX = (
        await buildEInvoice({ format: 'factur-x', profile: 'minimum', invoice: SAMPLE_INVOICE }, { accountId: 'bench' })
      ).xml;
      const attributes = Array.from({ length: Number(args.attributes) }, (_, i) => ` a${i}="${i}"`).join('');
      const hostile = facturX.replace('<rsm:CrossIndustryInvoice ', `<rsm:CrossIndustryInvoice${attributes} `);
      log(`xmllint: A's documents are ${(hostile.length / 2 ** 20).toFixed(1)} MiB each`);
      const create = (apiKey: string, body: object) =>
        call(base, '/v1/pdf/create', { apiKey, body: { data: {}, export_type: 'binary', ...body } });
      await contend(
        `xmllint (${args.documents} CII documents of ${args.attributes} attributes)`,
        () =>
          Array.from({ length: Number(args.documents) }, () =>
            create(a, { template_id: aTemplate, einvoice: { format: 'factur-x', xml: hostile } }),
          ),
        () =>
          create(b, {
            template_id: bTemplate,
            einvoice: { format: 'factur-x', profile: 'minimum', invoice: SAMPLE_INVOICE },
          }),
      );
    }
    const credits = async (apiKey: string) => (await call(base, '/v1/account', { apiKey })).json!.credits;
    console.log(`credits left: A ${String(await credits(a))} of 100, B ${String(await credits(b))} of 100`);
  } finally {
    await stopAppServer(server, dataDir);
    log(
      `load average after: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  }
}

await main();
