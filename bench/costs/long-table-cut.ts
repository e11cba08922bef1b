/**
 * What cutting a long table costs and saves (issue 52, docs/long-documents.md "Long tables"): plain
 * puppeteer on the peers' Chromium, no service, one document per browser. The peers' report with its
 * data ×N printed as shipped (`one`: one ledger table), as shipped with the renderer's cut applied
 * (`cut`, browser/pages/long-tables.ts, the same code the service runs), or hand-split into tables
 * of 500 rows (`split`, test/support/documents/split-ledger.ts). Prints every page; reports load,
 * cut and print times and the renderer's peak RSS over all three (ps, every 250 ms). `--html FILE` prints that file
 * instead of the report; `--out FILE` keeps the PDF.
 *
 *   node --import tsx bench/costs/long-table-cut.ts [--times 10] [--shape one|cut|split] [--tagged] [--part 24] [--html FILE] [--out FILE]
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cutLongTables } from '../../src/browser/pages/long-tables.js';
import { LONG_TABLES } from '../../src/rendering/render-limits.js';
import { splitLedger } from '../../test/support/documents/split-ledger.js';
import { preparePeers } from '../bench-service.js';
import { option } from '../cli-option.js';
import { launchPeerBrowser, PEERS, peerChromium, rendererPeak } from '../peer-chromium.js';

preparePeers();
const { fixtures } = peerChromium();
const times = Number(option('--times', '10'));
const shape = option('--shape', 'cut');
const tagged = process.argv.includes('--tagged');
const partRows = Number(option('--part', String(LONG_TABLES.partRows)));
const file = option('--html', '');
const out = option('--out', '');
const report = JSON.parse(readFileSync(join(PEERS, 'fixtures', 'report.json'), 'utf8')) as { rows: unknown[] };
const data = { ...report, rows: Array.from({ length: times }, () => report.rows).flat() };
const template = readFileSync(join(PEERS, 'fixtures', 'report.html'), 'utf8');
const html = file
  ? readFileSync(file, 'utf8')
  : shape === 'split'
    ? fixtures.renderString(splitLedger(template, 500), data)
    : fixtures.render('report.html', data);
const { browser, close } = await launchPeerBrowser('long-table');
try {
  const page = await browser.newPage();
  const { result, peakMb } = await rendererPeak(browser.process().pid, async () => {
    const t0 = performance.now();
    await page.setContent(html, { waitUntil: 'load', timeout: 0 });
    const t1 = performance.now();
    let cut = '';
    if (shape === 'cut') {
      const session = await page.createCDPSession();
      const { frameTree } = await session.send('Page.getFrameTree');
      // The report's own @page rule gives the page; these are what the service sends for A4 without margins.
      const geometry = { paperWidth: 8.27, paperHeight: 11.7, marginLeft: 0, marginRight: 0 };
      const done = await cutLongTables(
        session,
        frameTree.frame.id,
        { minRows: LONG_TABLES.minRows, partRows, geometry },
        new AbortController().signal,
      );
      cut = ` cut ${Math.round(performance.now() - t1)} ms (${done.rows} rows${done.leftAlone.length ? `; left alone: ${done.leftAlone.join('; ')}` : ''}),`;
    }
    const t2 = performance.now();
    const pdf = Buffer.from(
      await page.pdf({ printBackground: true, preferCSSPageSize: true, tagged, outline: tagged, timeout: 0 }),
    );
    return { pdf, timing: `load ${Math.round(t1 - t0)} ms,${cut} print ${Math.round(performance.now() - t2)} ms` };
  });
  if (out) writeFileSync(out, result.pdf);
  const pages = /Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', ['-'], { input: result.pdf, encoding: 'utf8' }))?.[1];
  console.log(
    `${file || `report ×${times}`}, ${shape}${shape === 'cut' ? ` (parts of ${partRows})` : ''}, ${tagged ? 'tagged' : 'untagged'}: ${result.timing}, ${pages} pages, renderer peak ${peakMb} MB`,
  );
} finally {
  await close();
}
