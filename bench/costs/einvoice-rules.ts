/**
 * The official rules' check of one invoice (issue 41): the CEN EN 16931 schematron and KoSIT's XRechnung
 * schematron, on the service's validation threads (src/einvoice/rules/), for the sample invoice as
 * XRechnung CII and UBL. Goal: at most 150 ms p50, off the event loop. Prints per syntax the first
 * check (threads starting, stylesheets loading), then p50 / p95 / max of `--n` warm checks, and the
 * longest event-loop gap meanwhile; then, for scale, the same with the syntax's schema (UBL: the OASIS
 * XSD on the xmllint threads), as a generation runs it. Then, beside the render time, the built service
 * over HTTP (the pack installed in its data directory): `POST /v1/pdf/create` of the peers' invoice
 * fixture alone, the same with a Factur-X EN 16931 e-invoice (render, PDF/A-3b and the CEN rules), and an
 * XRechnung CII (the rules, no render); `--render-n 0` leaves that out.
 *
 * The pack is installed into a temporary data directory with `pressroom einvoice rules install` (from
 * ../shared/einvoice-rules when present; the compile cache makes that a second), or `--data-dir` names
 * one that has it.
 *
 * `--lines 50,200,1000,5000` (issue 52): instead, the curve of the whole official check (the syntax's schema,
 * CEN and KoSIT) of the sample invoice with that many lines, XRechnung CII and UBL, p50 and max of
 * `--n` checks (3 past 1,000 lines); `--published` judges with the stylesheets as published (nothing
 * lifted: the curve before issue 52), with a 900 s bound a check instead of the service's 30 s.
 *
 * `npm run bench -- --suite einvoice-rules [--n 50]`, or `node --import tsx bench/costs/einvoice-rules.ts [--n 50] [--data-dir DIR]`
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { buildEInvoice } from '../../src/einvoice/einvoice.js';
import { createEInvoiceRules, type Judgement } from '../../src/einvoice/rules/official-checks.js';
import { closeXmlChecks } from '../../src/einvoice/xmllint/xml-schema-check.js';
import { SAMPLE_INVOICE } from '../../test/support/documents/einvoice-samples.js';
import { installPublishedRulesPack, installRulesPack } from '../../test/support/einvoice-rules.js';
import { createBenchAccount, SHARED_PEERS, startBenchService } from '../bench-service.js';
import { watchLoopGap } from '../loop-gap.js';

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((sorted.length - 1) * p))]!;

export async function main(argv: string[] = process.argv.slice(2)): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      n: { type: 'string', default: '50' },
      'render-n': { type: 'string', default: '20' },
      'data-dir': { type: 'string' },
      lines: { type: 'string' },
      published: { type: 'boolean', default: false },
    },
    allowPositionals: true,
  });
  const n = Number(values.n);
  const temporary = values['data-dir'] ? undefined : mkdtempSync(join(tmpdir(), 'bench-rules-'));
  const dataDir = values['data-dir'] ?? temporary!;
  if (values.lines) {
    if (temporary && values.published) await installPublishedRulesPack(dataDir);
    else if (temporary) await installRulesPack(dataDir);
    try {
      return await lineCurve(dataDir, values.lines.split(',').map(Number), { n, published: values.published });
    } finally {
      if (temporary) rmSync(temporary, { recursive: true, force: true });
    }
  }
  if (temporary) {
    console.log('installing the rules pack (pressroom einvoice rules install) …');
    await installRulesPack(dataDir);
  }
  const rules = createEInvoiceRules({ dataDir, mode: 'required' });
  try {
    const pack = (await rules.activePack())!;
    console.log(
      `pack ${pack.description.id.slice(0, 12)}: ${pack.description.rule_sets.en16931} + ${pack.description.rule_sets.xrechnung}; ${n} warm checks each\n`,
    );
    // The same gap with nothing running: what the machine's load alone does to a 1 ms timer.
    const idle = watchLoopGap();
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const idleGap = idle.stop();
    console.log(`longest event-loop gap over 3 s with nothing running: ${idleGap.toFixed(0)} ms\n`);
    console.log(
      'check                                  first ms   p50 ms   p95 ms   max ms   longest event-loop gap ms',
    );
    for (const format of ['xrechnung-cii', 'xrechnung-ubl'] as const) {
      const { xml } = await buildEInvoice({ format, invoice: SAMPLE_INVOICE }, { accountId: 'bench' });
      const syntax = format === 'xrechnung-ubl' ? 'ubl' : 'cii';
      for (const schema of [false, true]) {
        const what: Judgement = { syntax, profile: 'en16931', xrechnung: true, schema, ublDocument: 'Invoice' };
        const once = async () => {
          const started = performance.now();
          const report = await rules.judge(pack, xml, what, { accountId: 'bench', kind: 'paid' });
          if (report.checks.some((c) => c.status !== 'passed'))
            throw new Error(`the sample invoice failed: ${JSON.stringify(report.checks)}`);
          return performance.now() - started;
        };
        const first = await once();
        const loop = watchLoopGap();
        const times: number[] = [];
        for (let i = 0; i < n; i++) times.push(await once());
        const gap = loop.stop();
        times.sort((a, b) => a - b);
        const name = `${syntax.toUpperCase()}: ${schema ? (syntax === 'ubl' ? 'UBL XSD + ' : 'Factur-X XSD + ') : ''}CEN + KoSIT`;
        console.log(
          `${name.padEnd(38)} ${first.toFixed(0).padStart(8)} ${percentile(times, 0.5).toFixed(0).padStart(8)} ${percentile(times, 0.95).toFixed(0).padStart(8)} ${times.at(-1)!.toFixed(0).padStart(8)} ${gap.toFixed(0).padStart(12)}`,
        );
      }
    }
  } finally {
    await rules.close();
    await closeXmlChecks();
    if (temporary) rmSync(temporary, { recursive: true, force: true });
  }
  const renderN = Number(values['render-n']);
  if (renderN > 0) await besideTheRender(renderN);
}

/** The whole official check's time against the invoice's lines (issue 52). */
async function lineCurve(dataDir: string, sizes: number[], o: { n: number; published: boolean }): Promise<void> {
  const rules = createEInvoiceRules({ dataDir, mode: 'required', ...(o.published ? { timeoutMs: 900_000 } : {}) });
  try {
    const pack = (await rules.activePack())!;
    console.log(
      `pack ${pack.description.id.slice(0, 12)} (${o.published ? 'stylesheets as published' : 'context-free tests lifted'}): schema + CEN + KoSIT, the sample invoice's lines repeated`,
    );
    console.log('lines   CII MB   CII p50 ms   CII max ms   UBL MB   UBL p50 ms   UBL max ms   fired');
    for (const lines of sizes) {
      const invoice = {
        ...SAMPLE_INVOICE,
        lines: Array.from({ length: lines }, (_, i) => ({ ...SAMPLE_INVOICE.lines[i % 3]!, id: String(i + 1) })),
      };
      const row: string[] = [String(lines).padStart(5)];
      let fired = 0;
      for (const format of ['xrechnung-cii', 'xrechnung-ubl'] as const) {
        const { xml } = await buildEInvoice({ format, invoice }, { accountId: 'bench' });
        const syntax = format === 'xrechnung-ubl' ? 'ubl' : 'cii';
        const what: Judgement = { syntax, profile: 'en16931', xrechnung: true, schema: true, ublDocument: 'Invoice' };
        const times: number[] = [];
        const runs = lines > 1000 ? Math.min(o.n, 3) : o.n;
        for (let i = 0; i < runs; i++) {
          const started = performance.now();
          const report = await rules.judge(pack, xml, what, { accountId: 'bench', kind: 'paid' });
          times.push(performance.now() - started);
          fired += report.checks.reduce((sum, c) => sum + c.findings.length, 0);
        }
        times.sort((a, b) => a - b);
        row.push(
          (xml.length / 1e6).toFixed(2).padStart(8),
          percentile(times, 0.5).toFixed(0).padStart(12),
          times.at(-1)!.toFixed(0).padStart(12),
        );
      }
      console.log(`${row.join(' ')}   ${fired}`);
    }
  } finally {
    await rules.close();
    await closeXmlChecks();
  }
}

/** p50 of `POST /v1/pdf/create` through the built service: the invoice alone, with Factur-X, and XRechnung (no render). */
async function besideTheRender(n: number): Promise<void> {
  const service = await startBenchService();
  try {
    await installRulesPack(service.dataDir);
    const { apiKey, invoiceId } = await createBenchAccount(service.baseUrl);
    const data = JSON.parse(readFileSync(join(SHARED_PEERS, 'fixtures', 'invoice.json'), 'utf8')) as Record<
      string,
      unknown
    >;
    const cases = [
      { name: 'invoice PDF (render only)', body: {} },
      {
        name: 'invoice PDF + Factur-X EN 16931',
        body: { einvoice: { format: 'factur-x', profile: 'en16931', invoice: SAMPLE_INVOICE } },
      },
      { name: 'XRechnung CII (no render)', body: { einvoice: { format: 'xrechnung-cii', invoice: SAMPLE_INVOICE } } },
      { name: 'XRechnung UBL (no render)', body: { einvoice: { format: 'xrechnung-ubl', invoice: SAMPLE_INVOICE } } },
    ];
    console.log(
      `\nbeside the render: POST /v1/pdf/create through the built service, ${n} each after 2 warm-ups, export_type binary`,
    );
    console.log('request                                   p50 ms   p95 ms   einvoice_checks');
    for (const { name, body } of cases) {
      const once = async () => {
        const started = performance.now();
        const res = await fetch(`${service.baseUrl}/v1/pdf/create`, {
          method: 'POST',
          headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({ template_id: invoiceId, data, export_type: 'binary', ...body }),
        });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`${name}: HTTP ${res.status}`);
        return { ms: performance.now() - started, checks: res.headers.get('x-pressroom-einvoice-checks') ?? '—' };
      };
      await once();
      await once();
      const runs = [];
      for (let i = 0; i < n; i++) runs.push(await once());
      const times = runs.map((r) => r.ms).sort((a, b) => a - b);
      console.log(
        `${name.padEnd(40)} ${percentile(times, 0.5).toFixed(0).padStart(7)} ${percentile(times, 0.95).toFixed(0).padStart(8)}   ${runs[0]!.checks}`,
      );
    }
  } finally {
    await service.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
