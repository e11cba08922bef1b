/**
 * Where Chromium's cost goes when it prints a long document (issue 17, docs/long-documents.md
 * "Deadlines"): plain puppeteer on the peers' Chromium (no Pressroom), one document at a time, printing
 * only pages 1–20 (`pageRanges`) so that the figures show the print layout of the whole document,
 * not the painting of its pages. For each shape: the print time and the renderer process's peak RSS
 * (sampled from `ps` every 250 ms). Shapes: N paragraphs, N rows of nine inline-blocks, an N-row
 * table of nine cells, and the peers' report with its ledger ×3 and ×10 (the 330-page report); with
 * `--split K`, also each report with its ledger written as consecutive tables of K rows (the template
 * pattern docs/long-documents.md "Long tables" recommends). `--rows none` leaves the shapes out, `--ranges
 * all` prints every page.
 *
 *   node --import tsx bench/costs/print-layout-cost.ts [--rows 5000,15000|none] [--report 3,10] [--split 500] [--ranges 1-20|all]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { splitLedger } from '../../test/support/documents/split-ledger.js';
import { option } from '../cli-option.js';
import { launchPeerBrowser, PEERS, peerChromium, rendererPeak } from '../peer-chromium.js';
import { preparePeers } from '../bench-service.js';

function shape(kind: 'paragraphs' | 'inline-block rows' | 'table rows', n: number): string {
  const rows = Array.from({ length: n }, (_, i) =>
    kind === 'paragraphs'
      ? `<p>Row ${i} Lorem ipsum dolor sit amet 12,345.67 EUR paid</p>`
      : kind === 'inline-block rows'
        ? `<div class="r">${Array.from({ length: 9 }, (_, j) => `<span>c${j} ${i}</span>`).join('')}</div>`
        : `<tr>${Array.from({ length: 9 }, (_, j) => `<td>c${j} ${i}</td>`).join('')}</tr>`,
  ).join('');
  const style =
    '<style>p,div.r{margin:0;font:8pt sans-serif} span{display:inline-block;width:10%} td{font:8pt sans-serif}</style>';
  return `<!doctype html>${style}${kind === 'table rows' ? `<table>${rows}</table>` : rows}`;
}

/** Pages of a PDF, by pdfinfo (poppler-utils, which the peers' set-up installs). */
function pageCount(pdf: Buffer): string {
  const dir = mkdtempSync(join(tmpdir(), 'bench-print-pages-'));
  try {
    writeFileSync(join(dir, 'out.pdf'), pdf);
    return /Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [join(dir, 'out.pdf')], { encoding: 'utf8' }))?.[1] ?? '?';
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  preparePeers();
  const { fixtures } = peerChromium();
  const rangesOption = option('--ranges', '1-20');
  const ranges = rangesOption === 'all' ? '' : rangesOption;
  const splitRows = Number(option('--split', '0'));
  const documents: [string, string][] = [];
  const shapeRows = option('--rows', '5000,15000');
  for (const n of shapeRows === 'none' ? [] : shapeRows.split(',').map(Number)) {
    for (const kind of ['paragraphs', 'inline-block rows', 'table rows'] as const)
      documents.push([`${n} ${kind}`, shape(kind, n)]);
  }
  const report = JSON.parse(readFileSync(join(PEERS, 'fixtures', 'report.json'), 'utf8')) as { rows: unknown[] };
  for (const times of option('--report', '3,10').split(',').map(Number)) {
    const data = { ...report, rows: Array.from({ length: times }, () => report.rows).flat() };
    documents.push([`report, ledger ×${times} (${data.rows.length} rows)`, fixtures.render('report.html', data)]);
    if (splitRows > 0) {
      const template = splitLedger(readFileSync(join(PEERS, 'fixtures', 'report.html'), 'utf8'), splitRows);
      documents.push([
        `report, ledger ×${times} as tables of ${splitRows} rows`,
        fixtures.renderString(template, data),
      ]);
    }
  }
  console.log(
    `| document | print of ${ranges ? `pages ${ranges}` : 'every page'}, ms | renderer peak RSS, MB | pages |\n|---|--:|--:|--:|`,
  );
  for (const [name, html] of documents) {
    const { browser, close } = await launchPeerBrowser('print-layout');
    try {
      const page = await browser.newPage();
      await page.setContent(html, { waitUntil: 'load', timeout: 0 });
      const { result, peakMb } = await rendererPeak(browser.process().pid, async () => {
        const t0 = performance.now();
        const pdf = await page.pdf({
          printBackground: true,
          preferCSSPageSize: true,
          pageRanges: ranges,
          tagged: false,
          timeout: 0,
        });
        return { ms: Math.round(performance.now() - t0), pdf: Buffer.from(pdf) };
      });
      console.log(`| ${name} | ${result.ms} | ${peakMb} | ${pageCount(result.pdf)} |`);
    } finally {
      await close();
    }
  }
}

await main();
