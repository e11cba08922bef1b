/**
 * The longest event-loop stall while a watermark is drawn on a long PDF, on the event loop
 * (`drawWatermark`) and on a thread (`drawWatermarkOffThread`, what the service runs), and how long
 * each took. A timer ticks every 5 ms; a stall is how much later than due it ran.
 *
 *   node --import tsx bench/bounds/watermark-stall.ts [--pages 300,2000]
 */
import { drawWatermark, prepareWatermark } from '../../src/finishing/requested/watermark.js';
import { drawWatermarkOffThread } from '../../src/finishing/requested/watermark-thread.js';
import { option } from '../cli-option.js';
import { textPdf } from '../text-pdf.js';

const PAGES = option('pages', '300,2000').split(',').map(Number);

/** Runs `work` while a 5 ms timer measures the longest stall. */
async function stallOf(work: () => Promise<unknown>): Promise<{ ms: number; stallMs: number }> {
  let longest = 0;
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last - 5);
    last = now;
  }, 5);
  const started = performance.now();
  await work();
  const ms = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 20));
  clearInterval(timer);
  return { ms, stallMs: longest };
}

const prepared = await prepareWatermark({ text: 'CONFIDENTIAL' } as Parameters<typeof prepareWatermark>[0], {
  accountId: 'bench',
  readAsset: async () => undefined,
  loc: ['body'],
});
const options = { strictPages: false, loc: ['body'] };
await drawWatermarkOffThread(await textPdf(2), prepared, options); // the thread started once, as in a running service
console.log(
  '| pages | MB | on the event loop: ms, longest stall | on a thread: ms, longest stall |\n|--:|--:|--:|--:|',
);
for (const pages of PAGES) {
  const pdf = await textPdf(pages);
  const loop = await stallOf(() => drawWatermark(pdf, prepared, options));
  const thread = await stallOf(() => drawWatermarkOffThread(pdf, prepared, options));
  console.log(
    `| ${pages} | ${(pdf.length / 1e6).toFixed(1)} | ${loop.ms.toFixed(0)}, ${loop.stallMs.toFixed(0)} | ${thread.ms.toFixed(0)}, ${thread.stallMs.toFixed(0)} |`,
  );
}
process.exit(0);
