/**
 * What filling a form template costs (issue 54; docs/pdf-forms.md), `npm run bench -- --suite pdf-forms`:
 *
 * 1. **Speed**: a one-page form made here with pdf-lib (the invoice's kind of content: 20 text fields,
 *    a checkbox, a dropdown) filled and flattened (the default) against the HTML invoice fixture
 *    (`../shared/peers/fixtures/invoice.{html,json}`), both through POST /v1/pdf/create on one
 *    in-process service (SQLite) over loopback HTTP, one request at a time, interleaved (which goes
 *    first alternates) so that load on the machine falls on both alike. Prints p50/p95 per kind and the
 *    ratio of the p50s and of the totals (goal: the form at most 0.3× the invoice).
 * 2. **Memory**: a 200-page form (2 text fields a page: 400 fields, a form may have 500) filled through
 *    the same service `--n-long` times, one at a time. Per fill: its time, and the process's peak RSS
 *    during it (Linux VmHWM, reset before each fill through /proc/self/clear_refs; the form thread is a
 *    thread of this process, so its heap is in it; Chromium is not). The RSS before the first fill is
 *    printed beside it: bounded means the peak does not grow from fill to fill.
 *
 *   node --import tsx bench/costs/pdf-forms-cost.ts [--n 20] [--n-long 5] [--fixtures ../shared/peers/fixtures]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { PDFDocument, type PDFPage } from '@cantoo/pdf-lib';
import { loadConfig } from '../../src/config/load-config.js';
import { buildApp } from '../../src/http/app.js';
import { createServices } from '../../src/services.js';
import { createLogger } from '../../src/shared/log.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const ADMIN_TOKEN = 'bench-admin-token-0123456789';
const { values: args } = parseArgs({
  options: {
    n: { type: 'string', default: '20' },
    'n-long': { type: 'string', default: '5' },
    fixtures: { type: 'string', default: resolve(ROOT, '..', 'shared', 'peers', 'fixtures') },
  },
});
const FIXTURES = args.fixtures;
const N = Number(args.n);
const N_LONG = Number(args['n-long']);
const WARMUP = 2;
const LONG_PAGES = 200;

/** The one-page form's text fields: what an invoice's header says, each with a value to fill. */
const TEXT_FIELDS: Record<string, string> = {
  'seller.name': 'Northwind Cloud Services GmbH',
  'seller.street': 'Friedrichstraße 123',
  'seller.city': '10117 Berlin',
  'seller.vat_id': 'DE312345678',
  'seller.email': 'billing@northwind.example',
  'customer.name': 'contoso analytics sp. z o.o.',
  'customer.contact': 'Agnieszka Nowak',
  'customer.street': 'ul. Prosta 20',
  'customer.city': '00-850 Warszawa',
  'customer.vat_id': 'PL5252345678',
  'invoice.number': 'INV-2024-06-00421',
  'invoice.issue_date': '2024-06-30',
  'invoice.due_date': '2024-07-30',
  'invoice.po_number': 'PO-88213',
  'invoice.terms': 'Net 30',
  'payment.bank': 'Deutsche Testbank AG',
  'payment.iban': 'DE89 3704 0044 0532 0130 00',
  'payment.bic': 'COBADEFFXXX',
  'totals.net': '4,812.00',
  'totals.gross': '5,726.28',
};

const box = (x: number, y: number, width = 240, height = 20) => ({ x, y, width, height });

/** The one-page form: 20 text fields, a checkbox and a dropdown, as an invoice-like form has. */
async function onePageForm(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  const form = doc.getForm();
  Object.keys(TEXT_FIELDS).forEach((name, i) => {
    page.drawText(name, { x: 40, y: 790 - i * 32, size: 8 });
    form.createTextField(name).addToPage(page, box(200, 782 - i * 32));
  });
  form.createCheckBox('reverse_charge').addToPage(page, box(200, 120, 16, 16));
  const currency = form.createDropdown('invoice.currency');
  currency.addOptions(['EUR', 'PLN', 'USD']);
  currency.addToPage(page, box(200, 80, 120));
  return Buffer.from(await doc.save());
}

const longField = (page: number, what: 'name' | 'amount') => `p${page}.${what}`;

/** The long form: LONG_PAGES pages of 2 text fields and a line of text each. */
async function longForm(): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const form = doc.getForm();
  for (let p = 1; p <= LONG_PAGES; p++) {
    const page: PDFPage = doc.addPage([595, 842]);
    page.drawText(`Page ${p} of ${LONG_PAGES}: the declarant's name and the amount declared`, {
      x: 40,
      y: 790,
      size: 10,
    });
    form.createTextField(longField(p, 'name')).addToPage(page, box(40, 740));
    form.createTextField(longField(p, 'amount')).addToPage(page, box(40, 700, 120));
  }
  return Buffer.from(await doc.save());
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

const status = (key: 'VmRSS' | 'VmHWM') =>
  Number(new RegExp(`${key}:\\s+(\\d+)`).exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? NaN) / 1024;

/** Resets VmHWM to the current RSS (Linux ≥ 4.0); false where it cannot. */
function resetPeak(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

const dataDir = mkdtempSync(join(tmpdir(), 'pressroom-forms-bench-'));
const config = loadConfig({
  PRESSROOM_DATA_DIR: dataDir,
  PRESSROOM_ADMIN_TOKEN: ADMIN_TOKEN,
  PRESSROOM_SECRET_KEY: 'bench-secret-key-0123456789abcdef0123456789',
  PRESSROOM_LOG_LEVEL: 'warn',
  PRESSROOM_HOST: '127.0.0.1',
  PORT: '0',
});
const services = await createServices(config, { logger: createLogger(config.logLevel) });
const app = await buildApp(services);
try {
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const baseUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const call = async (path: string, body: unknown, auth: Record<string, string>) => {
    const res = await fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify(body),
    });
    const bytes = Buffer.from(await res.arrayBuffer());
    if (!res.ok) throw new Error(`${path} → ${res.status} ${bytes.toString('utf8').slice(0, 300)}`);
    return bytes;
  };
  const json = async (path: string, body: unknown, auth: Record<string, string>) =>
    JSON.parse((await call(path, body, auth)).toString());
  await services.renderer.warmUp();
  const account = await json(
    '/v1/admin/accounts',
    { credits: 2 * (N + WARMUP) + N_LONG + 20, plan: 'enterprise' },
    { authorization: `Bearer ${ADMIN_TOKEN}` },
  );
  const auth = { 'x-api-key': account.api_key as string };
  const invoiceTemplate = await json(
    '/v1/templates',
    { name: 'Invoice', html: readFileSync(join(FIXTURES, 'invoice.html'), 'utf8') },
    auth,
  );
  const onePage = await onePageForm();
  const formTemplate = await json(
    '/v1/templates',
    { name: 'Invoice form', kind: 'pdf_form', pdf_base64: onePage.toString('base64') },
    auth,
  );
  const bodies = {
    invoice: {
      template_id: invoiceTemplate.id,
      data: JSON.parse(readFileSync(join(FIXTURES, 'invoice.json'), 'utf8')),
      export_type: 'binary',
    },
    form: {
      template_id: formTemplate.id,
      data: { ...TEXT_FIELDS, reverse_charge: true, 'invoice.currency': 'EUR' },
      export_type: 'binary',
    },
  };
  const kinds = ['invoice', 'form'] as const;
  const labels = {
    invoice: 'HTML invoice (fixture)',
    form: `one-page form, ${formTemplate.form.fields} fields, flattened`,
  };
  const times = { invoice: [] as number[], form: [] as number[] };
  const sizes = { invoice: 0, form: 0 };
  for (let i = 0; i < WARMUP + N; i++) {
    for (let k = 0; k < kinds.length; k++) {
      const kind = kinds[(i + k) % kinds.length]!;
      const started = performance.now();
      const pdf = await call('/v1/pdf/create', bodies[kind], auth);
      if (i >= WARMUP) times[kind].push(performance.now() - started);
      sizes[kind] = pdf.length;
    }
  }
  const load = () =>
    loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
  const total = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const out: string[] = [];
  const print = (line: string) => {
    out.push(line);
    console.log(line);
  };
  print(
    `\nFilling a one-page form against the HTML invoice, n=${N} each, interleaved, one at a time (load average ${load()})`,
  );
  print('| kind | p50 ms | p95 ms | bytes | p50 ratio | total ratio |');
  print('|---|--:|--:|--:|--:|--:|');
  for (const kind of kinds) {
    const ratio = (f: (v: number[]) => number) => (f(times[kind]) / f(times.invoice)).toFixed(2);
    print(
      `| ${labels[kind]} | ${percentile(times[kind], 50).toFixed(0)} | ${percentile(times[kind], 95).toFixed(0)} | ${sizes[kind]} | ${ratio((v) => percentile(v, 50))}× | ${ratio(total)}× |`,
    );
  }
  const p50Ratio = percentile(times.form, 50) / percentile(times.invoice, 50);
  const totalRatio = total(times.form) / total(times.invoice);
  print(
    `\n(goal: the form at most 0.3× the invoice: ${p50Ratio <= 0.3 && totalRatio <= 0.3 ? 'met' : 'NOT met'} — p50 ${p50Ratio.toFixed(2)}×, total ${totalRatio.toFixed(2)}×)`,
  );

  if (N_LONG > 0) {
    const long = await longForm();
    const longTemplate = await json(
      '/v1/templates',
      { name: 'Long form', kind: 'pdf_form', pdf_base64: long.toString('base64') },
      auth,
    );
    const data: Record<string, string> = {};
    for (let p = 1; p <= LONG_PAGES; p++) {
      data[longField(p, 'name')] = `Declarant ${p} Zoë Łódź`;
      data[longField(p, 'amount')] = `${p * 100}.50`;
    }
    const body = { template_id: longTemplate.id, data, export_type: 'binary' };
    const before = status('VmRSS');
    const rows: string[] = [];
    let canReset = true;
    for (let i = 1; i <= N_LONG; i++) {
      canReset = resetPeak() && canReset;
      const started = performance.now();
      const pdf = await call('/v1/pdf/create', body, auth);
      const ms = performance.now() - started;
      rows.push(
        `| ${i} | ${ms.toFixed(0)} | ${pdf.length} | ${status('VmHWM').toFixed(0)} | ${status('VmRSS').toFixed(0)} |`,
      );
    }
    print(
      `\n${LONG_PAGES}-page form (${longTemplate.form.fields} fields, ${long.length} bytes as made, ${longTemplate.form.bytes} stored), filled and flattened ${N_LONG}× one at a time (load average ${load()})`,
    );
    print(
      `Process RSS before the first fill: ${before.toFixed(0)} MB (the service with its Chromium pool's Node side warm; Chromium's processes not counted)`,
    );
    print(
      `| fill | ms | bytes out | peak RSS during the fill MB${canReset ? '' : ' (since start: clear_refs refused)'} | RSS after MB |`,
    );
    print('|--:|--:|--:|--:|--:|');
    for (const row of rows) print(row);
  }
} finally {
  await app.close();
  await services.close();
  rmSync(dataDir, { recursive: true, force: true });
}
