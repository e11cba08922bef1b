/**
 * Issue 51: Pressroom's own object-stream compactor (src/finishing/pdf-compaction.ts) against qpdf's
 * (`qpdf --object-streams=generate`), on the PDFs Chromium prints for the peers' invoice, their
 * 33-page report and that report with its data ×10 (its ledger as tables of 500 rows), tagged as the
 * service prints them by default. Prints, per document, the bytes before, after each, and each one's
 * wall time (median of `--runs`).
 *
 *   node --import tsx bench/costs/compaction-vs-qpdf.ts [--runs 3] [--peers /work/shared/peers]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { compactPdf } from '../../src/finishing/pdf-compaction.js';
import { startTestRenderer } from '../../test/support/documents/rendering-kit.js';
import { splitLedger } from '../../test/support/documents/split-ledger.js';

const { values: args } = parseArgs({
  options: { runs: { type: 'string', default: '3' }, peers: { type: 'string', default: '/work/shared/peers' } },
});
const runs = Number(args.runs);
const fixture = (name: string) => ({
  html: readFileSync(join(args.peers, 'fixtures', `${name}.html`), 'utf8'),
  data: JSON.parse(readFileSync(join(args.peers, 'fixtures', `${name}.json`), 'utf8')) as Record<string, unknown>,
});
const invoice = fixture('invoice');
const report = fixture('report');
const documents = [
  { name: 'invoice', html: invoice.html, data: invoice.data },
  { name: 'report (33 pages)', html: report.html, data: report.data },
  {
    name: 'report ×10 (330 pages)',
    html: splitLedger(report.html, 500),
    data: { ...report.data, rows: Array.from({ length: 10 }, () => report.data.rows as unknown[]).flat() },
  },
];

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const time = (work: () => void) => {
  const started = performance.now();
  work();
  return performance.now() - started;
};

const dir = mkdtempSync(join(tmpdir(), 'compaction-vs-qpdf-'));
const renderer = await startTestRenderer({
  concurrency: 1,
  timeoutMs: 900_000,
  asyncTimeoutMs: 900_000,
  templateTimeoutMs: 120_000,
  templateOutputLimitBytes: 64 * 1024 * 1024,
  rendererMemoryMb: 8192,
});
try {
  console.log(
    '| document | Chromium | Pressroom compactor | qpdf --object-streams=generate | the same, --stream-data=preserve | compactor vs qpdf |',
  );
  console.log('|---|--:|--:|--:|--:|--:|');
  for (const doc of documents) {
    const { pdf } = await renderer.render({ template: { html: doc.html }, data: doc.data, mode: 'async' });
    const input = join(dir, 'in.pdf');
    const output = join(dir, 'qpdf.pdf');
    writeFileSync(input, pdf);
    let compacted = 0;
    const ours = median(Array.from({ length: runs }, () => time(() => (compacted = compactPdf(pdf).bytesAfter))));
    const theirs = median(
      Array.from({ length: runs }, () =>
        time(() => execFileSync('qpdf', ['--object-streams=generate', input, output])),
      ),
    );
    const qpdfBytes = statSync(output).size;
    // Streams kept as Chromium compressed them: qpdf then only moves objects, as the compactor does.
    const preserved = median(
      Array.from({ length: runs }, () =>
        time(() => execFileSync('qpdf', ['--object-streams=generate', '--stream-data=preserve', input, output])),
      ),
    );
    const preservedBytes = statSync(output).size;
    const kb = (n: number) => `${(n / 1024).toFixed(0)} KB`;
    console.log(
      `| ${doc.name} | ${kb(pdf.length)} | ${kb(compacted)} in ${ours.toFixed(0)} ms | ${kb(qpdfBytes)} in ${theirs.toFixed(0)} ms | ${kb(preservedBytes)} in ${preserved.toFixed(0)} ms | ${(((qpdfBytes - compacted) / qpdfBytes) * 100).toFixed(1)} % smaller |`,
    );
  }
} finally {
  await renderer.close();
  rmSync(dir, { recursive: true, force: true });
}
