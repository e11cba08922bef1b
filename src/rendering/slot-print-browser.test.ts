/**
 * Per-slot print browsers (`PRESSROOM_PRINT_BROWSERS=per-slot`, slot-print-browser.ts), on real
 * Chromium: documents without scripts print in each slot's own single-process browser, long ones on
 * the slot's print page in the shared browser; tags, text and scripted documents are as with the shared browser; a print browser killed from outside costs no
 * render, memory past the bound is DOCUMENT_TOO_LARGE, recycling ends the retired print browsers,
 * closing the renderer leaves no process behind, and a print browser left idle, or past its age, is
 * closed and its slot's next document printed on a new one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../shared/errors.js';
import { dataUri, solidPng } from '../../test/support/png-images.js';
import { descendants, pdfInfo, pdfText, startTestRenderer } from '../../test/support/rendering-kit.js';
import { until } from '../../test/support/until.js';
import { isDead, readProcStat } from './chromium/proc-stat.js';
import type { PdfRenderer } from './pdf-renderer.js';
import { SLOT_PRINT_MAX_MARKUP_CHARS } from './print-routing.js';

/** Well above an idle single-process print browser (~150–250 MB resident here). */
const LIMIT_MB = 600;

let renderer: PdfRenderer;

beforeAll(async () => {
  // Not closed for idleness while these tests run, however slowly (that is the last tests'), and
  // not replaced for age (the last test's) before 150 s, past config's limit of 120 s but short of
  // the ~170 s after which Chromium stops printing: these tests count launches and compare browsers,
  // and take 20–60 s here.
  renderer = await startTestRenderer({ concurrency: 2, printBrowsers: 'per-slot', rendererMemoryMb: LIMIT_MB, maxImagePixels: 500_000_000, printBrowserIdleMs: 600_000, printBrowserMaxAgeMs: 150_000 });
});

afterAll(async () => {
  await renderer?.close();
});

const render = (html: string, options: { tagged?: boolean } = {}) => renderer.render({ template: { html }, data: {}, ...options }).then((r) => r.pdf);
const printBrowsers = () => descendants(process.pid, '--single-process');

/** CPU time (user + system, clock ticks) of process `pid` so far. */
const cpuTicks = (pid: number) => readProcStat(pid)?.cpuTicks ?? Number.NaN;

describe.sequential('per-slot print browsers', () => {
  it('print documents without scripts in a single-process browser per slot', async () => {
    const browsers = printBrowsers();
    expect(browsers.length).toBe(2);
    const before = browsers.map(cpuTicks);
    const pdfs: Buffer[] = [];
    for (let i = 0; i < 3; i++) pdfs.push(...(await Promise.all([render(`<h1>Invoice A-${i}</h1>`), render(`<h1>Invoice B-${i}</h1>`)])));
    expect(pdfs.map((pdf) => pdfText(pdf).trim())).toEqual(['Invoice A-0', 'Invoice B-0', 'Invoice A-1', 'Invoice B-1', 'Invoice A-2', 'Invoice B-2']);
    // The slots' own browsers did the printing (how many processes a print starts is bench/print-process-cost.ts's to count).
    expect(browsers.map(cpuTicks).reduce((sum, ticks) => sum + ticks, 0)).toBeGreaterThan(before.reduce((sum, ticks) => sum + ticks, 0));
    expect(printBrowsers()).toEqual(browsers);
    expect(renderer.stats()).toMatchObject({ printBrowserLaunches: 2, crashes: 0 });
  });

  it('keep tags and the outline, or leave them out untagged', async () => {
    const html = '<h1>Heading one</h1><p>text</p><h2>Heading two</h2>';
    expect(pdfInfo(await render(html)).Tagged).toBe('yes');
    expect(pdfInfo(await render(html, { tagged: false })).Tagged).toBe('no');
  });

  it('leave documents with scripts on the multi-process browser', async () => {
    // A single-process browser cannot open the throwaway browser context a scripted document gets.
    expect(pdfText(await render('<p id="out"></p><script>document.getElementById("out").textContent = "scripted " + (6 * 7);</script>'))).toContain('scripted 42');
  });

  it('print long documents on the multi-process browser, on a print page each slot keeps for them', async () => {
    // A single-process browser loses to contention from about three pages on, and stops printing ~3
    // minutes after its launch, so a long document (judged by its markup, print-routing.ts) is not
    // given one. With both slots' print browsers stopped (SIGSTOP), only a document printed elsewhere
    // can come back. Long markup, cheap to print: a comment.
    const rows = Array.from({ length: 400 }, (_, i) => `<tr><td>Ledger row ${i}</td><td>${(i * 7.31).toFixed(2)} EUR</td></tr>`).join('');
    const long = (title: string) => `<!-- ${'x'.repeat(SLOT_PRINT_MAX_MARKUP_CHARS)} --><h1>${title}</h1><table>${rows}</table><p>End of ledger</p>`;
    const browsers = printBrowsers();
    expect(browsers.length).toBe(2);
    for (const pid of browsers) process.kill(pid, 'SIGSTOP');
    try {
      // Two at once (a page each), then two more on the pages kept.
      for (const round of [1, 2]) {
        const texts = await Promise.all([render(long(`Ledger ${round}-a`), { tagged: false }), render(long(`Ledger ${round}-b`))]).then((pdfs) => pdfs.map((pdf) => pdfText(pdf)));
        expect(texts[0]).toContain(`Ledger ${round}-a`);
        expect(texts[1]).toContain(`Ledger ${round}-b`);
        for (const text of texts) expect(text).toContain('Ledger row 399');
      }
    } finally {
      for (const pid of browsers) process.kill(pid, 'SIGCONT');
    }
    expect(pdfText(await render('<p>Short again</p>'))).toContain('Short again');
    expect(printBrowsers()).toEqual(browsers);
    expect(renderer.stats()).toMatchObject({ printBrowserStalls: 0, crashes: 0, pageCrashRetries: 0 });
  });

  it('a print browser killed from outside costs no render: a render that finds its page lost is tried once more on a new browser', async () => {
    const before = printBrowsers();
    expect(before.length).toBe(2);
    for (const pid of before) process.kill(pid, 'SIGKILL');
    // Both slots' browsers are gone; each slot launches a new one for its next document (at once, or
    // after the print on the lost page failed as a crashed page's, which the renderer tries once more).
    const texts = await Promise.all([render('<p>after the kill 1</p>'), render('<p>after the kill 2</p>')]).then((pdfs) => pdfs.map((pdf) => pdfText(pdf)));
    expect(texts.join(' ')).toMatch(/after the kill 1[\s\S]*after the kill 2/);
    const after = printBrowsers();
    expect(after.length).toBe(2);
    expect(after.some((pid) => before.includes(pid))).toBe(false);
    expect(renderer.stats()).toMatchObject({ printBrowserLaunches: 4, crashes: 2 });
  });

  it('a document past the memory bound is DOCUMENT_TOO_LARGE; the next one prints', async () => {
    const { crashes: crashesBefore, printBrowserLaunches: launchesBefore } = renderer.stats();
    // Long HTML, short markup: an image's data: URI does not make a document long, so this one is
    // printed, and past the bound killed, in its slot's own browser.
    const photo = `<p>photo</p><img style="width:100%" src="${dataUri(solidPng(8000, 8000, 77))}">`;
    expect(photo.length).toBeGreaterThan(SLOT_PRINT_MAX_MARKUP_CHARS);
    const error = await render(photo).then(
      () => undefined,
      (e: unknown) => e as AppError,
    );
    expect(error?.code).toBe('DOCUMENT_TOO_LARGE');
    expect(error?.details).toMatchObject({ bound: 'memory', limitMb: LIMIT_MB });
    expect(pdfText(await render('<p>Next</p>'))).toContain('Next');
    // A memory kill is the document's bound, not a crash; the killed print browser was replaced.
    expect(renderer.stats().crashes).toBe(crashesBefore);
    expect(renderer.stats().printBrowserLaunches).toBe(launchesBefore + 1);
  });

  it('closing the renderer ends every print browser', async () => {
    const pids = printBrowsers();
    expect(pids.length).toBeGreaterThan(0);
    await renderer.close();
    const alive = pids.filter((pid) => !isDead(readProcStat(pid)));
    expect(alive).toEqual([]);
  });
});

describe('per-slot print browsers when the browser is recycled', () => {
  it('close the retired generation\'s print browsers and print on new ones', async () => {
    const recycling = await startTestRenderer({ concurrency: 2, printBrowsers: 'per-slot', recycleAfterRenders: 3, printBrowserIdleMs: 600_000 });
    try {
      const texts: string[] = [];
      for (let round = 0; round < 5; round++) {
        const pdfs = await Promise.all([0, 1].map((i) => recycling.render({ template: { html: `<p>Recycled ${round}-${i}</p>` }, data: {} }).then((r) => r.pdf)));
        texts.push(...pdfs.map((pdf) => pdfText(pdf).trim()));
      }
      expect(texts).toEqual([0, 1, 2, 3, 4].flatMap((round) => [`Recycled ${round}-0`, `Recycled ${round}-1`]));
      expect(recycling.stats().launches).toBeGreaterThan(1);
      // The new generation opens its slots (and so their print browsers) beside the old one's renders.
      await until(() => recycling.stats().printBrowserLaunches > 2 || undefined, 30_000, 'the new generation\'s print browsers');
      expect(recycling.stats().crashes).toBe(0);
      // Retired generations close once their renders are back: at most the live slots' browsers stay.
      await until(() => (printBrowsers().length <= 2 ? true : undefined), 30_000, 'the retired print browsers to end');
    } finally {
      await recycling.close();
    }
    expect(printBrowsers()).toEqual([]);
  });
});

describe('per-slot print browsers left idle', () => {
  // Chromium with --single-process stops printing for good after sitting idle (45–90 s here): an idle
  // print browser is closed, and the next document launches a new one, with nothing failed.
  it('are closed after PRESSROOM_PRINT_BROWSER_IDLE_MS, and the next document prints on a new browser', async () => {
    const idle = await startTestRenderer({ concurrency: 1, printBrowsers: 'per-slot', rendererMemoryMb: LIMIT_MB, printBrowserIdleMs: 300 });
    const renderText = (html: string) => idle.render({ template: { html }, data: {} }).then((r) => pdfText(r.pdf));
    // The other renderers of this file are closed: every single-process browser left is this one's.
    const closed = (what: string) => until(() => (printBrowsers().length === 0 ? true : undefined), 30_000, what);
    try {
      // The browser launched at warm-up, before any render, is closed when left idle too.
      await closed('the print browser launched at warm-up to close');
      expect(await renderText('<p>Before the pause</p>')).toContain('Before the pause');
      expect(idle.stats()).toMatchObject({ printBrowserLaunches: 2, crashes: 0 });
      await closed('the idle print browser to close');
      expect(await renderText('<p>After the pause</p>')).toContain('After the pause');
      expect(printBrowsers().length).toBeLessThanOrEqual(1);
      expect(idle.stats()).toMatchObject({ printBrowserLaunches: 3, crashes: 0 });
    } finally {
      await idle.close();
    }
    expect(printBrowsers()).toEqual([]);
  });
});

describe('per-slot print browsers past their age', () => {
  // Chromium with --single-process stops printing for good some three minutes after its launch, busy
  // or idle: a print browser is used for at most PRESSROOM_PRINT_BROWSER_MAX_AGE_MS, however busy its
  // slot, and the next document launches a new one, with nothing failed.
  it('are closed once past PRESSROOM_PRINT_BROWSER_MAX_AGE_MS though never idle that long, and the next document prints on a new browser', async () => {
    const aging = await startTestRenderer({ concurrency: 1, printBrowsers: 'per-slot', rendererMemoryMb: LIMIT_MB, printBrowserIdleMs: 600_000, printBrowserMaxAgeMs: 300 });
    const renderText = (html: string) => aging.render({ template: { html }, data: {} }).then((r) => pdfText(r.pdf));
    const closed = (what: string) => until(() => (printBrowsers().length === 0 ? true : undefined), 30_000, what);
    try {
      await closed('the print browser launched at warm-up to close at its age');
      for (const round of [1, 2]) {
        expect(await renderText(`<p>Round ${round}</p>`)).toContain(`Round ${round}`);
        expect(aging.stats()).toMatchObject({ crashes: 0, pageCrashRetries: 0 });
        // The warm-up's browser, then one per round at least (the slot may launch the next in the background).
        expect(aging.stats().printBrowserLaunches).toBeGreaterThanOrEqual(1 + round);
        await closed(`the print browser of round ${round} to close at its age`);
      }
    } finally {
      await aging.close();
    }
    expect(printBrowsers()).toEqual([]);
  });

  it('closed at its age as its slot is given back, a browser hands the next document, taken at once, to a new one', async () => {
    // With an age shorter than any render, each render's slot is given back with its browser past its
    // age; the next render takes the slot at once, and must print on a new browser, never start on
    // the one shutting down (no page crash, nothing retried).
    const aging = await startTestRenderer({ concurrency: 1, printBrowsers: 'per-slot', rendererMemoryMb: LIMIT_MB, printBrowserIdleMs: 600_000, printBrowserMaxAgeMs: 1 });
    try {
      const texts: string[] = [];
      for (let i = 0; i < 4; i++) texts.push(pdfText((await aging.render({ template: { html: `<p>Back to back ${i}</p>` }, data: {} })).pdf).trim());
      expect(texts).toEqual([0, 1, 2, 3].map((i) => `Back to back ${i}`));
      expect(aging.stats()).toMatchObject({ crashes: 0, pageCrashRetries: 0 });
      expect(aging.stats().printBrowserLaunches).toBeGreaterThanOrEqual(4);
    } finally {
      await aging.close();
    }
    expect(printBrowsers()).toEqual([]);
  });
});

describe('a per-slot print browser that stops answering', () => {
  // Should Chromium stop printing sooner than its measured ~3 minutes (or in some other way), a
  // document on it would wait for its deadline. A document not printed within its allowance
  // (PRESSROOM_PRINT_BROWSER_STALL_MS plus its HTML's share) kills the browser instead, and prints again on a new one.
  it('is killed once a document has waited past its allowance, and the document prints on a new browser', async () => {
    const before = new Set(printBrowsers());
    // The allowance also binds the retry on the new browser: 8 s, so that a loaded slow machine prints
    // the retried one-line document within it (with 1 s, a CI run's retry failed as a crash too, most
    // likely killed as a stall itself).
    const stalling = await startTestRenderer({ concurrency: 1, printBrowsers: 'per-slot', rendererMemoryMb: LIMIT_MB, printBrowserIdleMs: 600_000, printBrowserMaxAgeMs: 120_000, printBrowserStallMs: 8_000 });
    try {
      const [stopped, ...others] = printBrowsers().filter((pid) => !before.has(pid));
      expect(stopped).toBeDefined();
      expect(others).toEqual([]);
      // Stopped, it answers nothing, as a browser that stopped printing does not.
      process.kill(stopped!, 'SIGSTOP');
      const pdf = (await stalling.render({ template: { html: '<h1>Printed after the stall</h1>' }, data: {} })).pdf;
      expect(pdfText(pdf).trim()).toBe('Printed after the stall');
      expect(stalling.stats()).toMatchObject({ printBrowserStalls: 1, pageCrashRetries: 1, crashes: 0 });
      await until(() => (isDead(readProcStat(stopped!)) ? true : undefined), 10_000, 'the stopped print browser to be killed');
      // The new browser prints the next document as usual.
      expect(pdfText((await stalling.render({ template: { html: '<p>And the next</p>' }, data: {} })).pdf).trim()).toBe('And the next');
      expect(stalling.stats()).toMatchObject({ printBrowserStalls: 1, pageCrashRetries: 1, crashes: 0 });
    } finally {
      await stalling.close();
    }
    expect(printBrowsers().filter((pid) => !before.has(pid))).toEqual([]);
  });
});
