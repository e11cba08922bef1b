/**
 * What a heavy header costs Chromium (issue 37, the reason HEADER_FOOTER_MAX_CHARS is a few MiB):
 * documents of 1, 10 and 30 pages whose header is an `<img>` with `--mib` MiB in a `data:` URI, each
 * against the same document with a one-word header (the data still passed, so evaluation costs the
 * same). Chromium lays the header out again on every page, so the difference grows with the pages.
 *
 *   node --import tsx bench/costs/header-cost.ts [--mib 2.9]   (4 MiB of base64: the most a header may carry)
 */
import { randomBytes } from 'node:crypto';
import { startTestRenderer } from '../../test/support/documents/rendering-kit.js';
import { dataUri, solidPng } from '../../test/support/documents/png-images.js';

const mib = Number(process.argv[process.argv.indexOf('--mib') + 1] || 2.9) || 2.9;
const renderer = await startTestRenderer({
  concurrency: 1,
  templateOutputLimitBytes: 200 * 1024 * 1024,
  timeoutMs: 300_000,
  templateTimeoutMs: 120_000,
});
try {
  // A decodable PNG followed by noise: the header carries `mib` MiB, Chromium draws a 200 × 50 image.
  const uri = dataUri(Buffer.concat([solidPng(200, 50, 100), randomBytes(Math.round(mib * 1024 * 1024))]));
  console.log(`header data: URI ${(uri.length / 1024 / 1024).toFixed(1)} MiB`);
  for (const pages of [1, 10, 30]) {
    const html = Array.from(
      { length: pages },
      (_, i) => `<div style="page-break-after:always">Page ${i + 1}</div>`,
    ).join('');
    const times: number[] = [];
    for (const header of ['{{ uri | length }} characters', '<img src="{{ uri }}" height="20">']) {
      const startedAt = performance.now();
      await renderer.render({
        template: { html, page: { header_html: header, margin: { top: '20mm' } } },
        data: { uri },
        accountId: 'bench',
      });
      times.push(performance.now() - startedAt);
    }
    const extra = times[1]! - times[0]!;
    console.log(
      `${pages} pages: ${Math.round(times[0]!)} ms plain, ${Math.round(times[1]!)} ms with the image; ${Math.round(extra / pages)} ms more per page`,
    );
  }
} finally {
  await renderer.close();
}
