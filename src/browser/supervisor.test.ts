/**
 * Chromium is warm and supervised: crashes, hangs, queueing, recycling and a clean shutdown.
 *
 * Nothing here reads the clock: a render "in flight" is one the renderer counts as active, a render
 * "not held up" is one that completed while the other was still pending, and every wait is on
 * state under a generous deadline. Renderers are shared within a describe block where the tests
 * allow it (a launch and warm-up costs seconds on a busy 2-core machine).
 */
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppError } from '../shared/errors.js';
import {
  descendants,
  pdfText,
  processesMentioning,
  startTestRenderer,
  testRenderer,
  warmUpPatiently,
} from '../../test/support/documents/rendering-kit.js';
import { until } from '../../test/support/until.js';
import { protocolTimeoutMs } from './browser-supervisor.js';
import type { PdfRenderer } from '../rendering/pdf-renderer.js';

const doc = (marker: string) => ({ template: { html: '<p>{{ m }}</p>' }, data: { m: marker } });
/** A scripted document that never becomes ready: it stays in flight until its deadline, an abort or a crash. */
const neverReady = {
  template: { html: '<p>WAITING</p><script>window.pressroomReady = new Promise(() => {});</script>' },
  data: {},
};
/** A template evaluation that runs until stopped. */
const endlessTemplate = {
  template: { html: '{% for i in range(0, 100000) %}{% for j in range(0, 100000) %}{% endfor %}{% endfor %}' },
  data: {},
};
const PROCESS_GONE_MS = 30_000;

function profileDirOf(pid: number): string {
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  return cmdline.find((arg) => arg.startsWith('--user-data-dir='))!.slice('--user-data-dir='.length);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The error code a render ended with, or 'ok'. */
const outcome = (render: Promise<unknown>): Promise<string> =>
  render.then(
    () => 'ok',
    (error: unknown) => (error as AppError).code ?? String(error),
  );

/** Resolves once `renderer` has exactly `n` renders holding a slot. */
const whenActive = (renderer: PdfRenderer, n: number) =>
  until(() => renderer.stats().active === n, 60_000, `${n} active render(s)`);

describe('lifecycle', () => {
  it('starts lazily, warms up on demand, and close() leaves no process and no profile directory', async () => {
    const renderer = testRenderer({ concurrency: 1 });
    try {
      expect(renderer.isReady()).toBe(false);
      expect(renderer.stats().browserPid).toBeUndefined();
      await warmUpPatiently(renderer);
      expect(renderer.isReady()).toBe(true);
      const pid = renderer.stats().browserPid!;
      const profile = profileDirOf(pid);
      expect(profile.startsWith(join(tmpdir(), 'pressroom-chromium-'))).toBe(true);
      expect(processesMentioning(profile).length).toBeGreaterThan(2);
      expect(pdfText((await renderer.render(doc('WARM'))).pdf)).toContain('WARM');

      await renderer.close();
      expect(isAlive(pid)).toBe(false);
      expect(processesMentioning(profile)).toEqual([]);
      expect(existsSync(profile)).toBe(false);
      expect(renderer.isReady()).toBe(false);
      await expect(renderer.render(doc('late'))).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    } finally {
      await renderer.close();
    }
  });
});

describe('crash recovery', () => {
  // The template limit is far away: a lost browser, not a deadline, must end the renders here.
  const options = { concurrency: 1, templateTimeoutMs: 40_000, timeoutMs: 50_000 };
  let renderer: PdfRenderer;

  beforeAll(async () => {
    renderer = await startTestRenderer(options);
  });
  afterAll(async () => {
    await renderer?.close();
  });

  it('replaces a browser killed with SIGKILL mid-render; the next render works', async () => {
    const { browserPid: pid, crashes } = renderer.stats();
    const profile = profileDirOf(pid!);
    const inFlight = outcome(renderer.render(neverReady));
    await whenActive(renderer, 1);
    process.kill(pid!, 'SIGKILL');
    expect(await inFlight).toBe('RENDER_FAILED');
    expect(pdfText((await renderer.render(doc('AFTER-CRASH'))).pdf)).toContain('AFTER-CRASH');
    const stats = renderer.stats();
    expect(stats.crashes).toBe(crashes + 1);
    expect(stats.browserPid).not.toBe(pid);
    await until(
      () => !existsSync(profile) && processesMentioning(profile).length === 0,
      PROCESS_GONE_MS,
      'the dead browser’s processes and profile to be gone',
    );
  });

  it('fails a template evaluation with RENDER_FAILED, not at its time limit, when the browser is killed under it', async () => {
    const inFlight = outcome(renderer.render(endlessTemplate));
    await whenActive(renderer, 1);
    process.kill(renderer.stats().browserPid!, 'SIGKILL');
    // Had the loss gone unnoticed, the render would have ended at the template limit with TEMPLATE_TIMEOUT.
    expect(await inFlight).toBe('RENDER_FAILED');
    expect(pdfText((await renderer.render(doc('AFTER-KILL'))).pdf)).toContain('AFTER-KILL');
  });

  it('replaces crashed pages (killed renderer processes); the next render works', async () => {
    // The crash-replacement browser of the tests above may still be opening its pages.
    await warmUpPatiently(renderer);
    const pid = renderer.stats().browserPid!;
    const killed = descendants(pid, '--type=renderer');
    expect(killed.length).toBeGreaterThan(0);
    for (const child of killed) process.kill(child, 'SIGKILL');
    // Chromium notices a renderer's exit when it reaps the process.
    await until(() => killed.every((child) => !isAlive(child)), PROCESS_GONE_MS, 'the killed renderers to be reaped');
    expect(pdfText((await renderer.render(doc('AFTER-PAGE-CRASH'))).pdf)).toContain('AFTER-PAGE-CRASH');
    expect(renderer.stats().browserPid).toBe(pid);
  });

  it('renders a document asked for right after its pages’ renderers were killed, before Chromium reports the crash or after', async () => {
    await warmUpPatiently(renderer);
    const pid = renderer.stats().browserPid!;
    const killed = descendants(pid, '--type=renderer');
    expect(killed.length).toBeGreaterThan(0);
    for (const child of killed) process.kill(child, 'SIGKILL');
    // No wait: the render may take pages whose crash Pressroom has not heard of yet. Either way
    // it must print, not blame the document (TEMPLATE_RENDER_ERROR) or fail (RENDER_FAILED).
    expect(pdfText((await renderer.render(doc('RIGHT-AFTER-KILL'))).pdf)).toContain('RIGHT-AFTER-KILL');
    expect(renderer.stats().browserPid).toBe(pid);
    await until(() => killed.every((child) => !isAlive(child)), PROCESS_GONE_MS, 'the killed renderers to be reaped');
  });
});

describe('limits', () => {
  // A render deadline no test here reaches: hung renders are ended by the test (abort).
  let renderer: PdfRenderer;

  beforeAll(async () => {
    renderer = await startTestRenderer({ concurrency: 2, queueLimit: 1, timeoutMs: 60_000 });
  });
  afterAll(async () => {
    await renderer?.close();
  });

  it('refuses work beyond the queue limit with RENDERER_BUSY', async () => {
    // Two slots, one place in the line: the fourth is refused at once (the calls are made together,
    // so the first three are still in flight when it arrives).
    const results = await Promise.allSettled([1, 2, 3, 4].map((n) => renderer.render(doc(`D-${n}`))));
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'rejected']);
    expect((results[3] as PromiseRejectedResult).reason).toMatchObject({
      code: 'RENDERER_BUSY',
      details: { retryAfterSeconds: 2 },
    });
  });

  it('keeps the other slot working while one render hangs', async () => {
    const controller = new AbortController();
    let hungSettled = false;
    const hung = outcome(
      renderer.render({
        template: { html: '<p>HUNG</p><script>for (;;) {}</script>' },
        data: {},
        signal: controller.signal,
      }),
    ).finally(() => {
      hungSettled = true;
    });
    await whenActive(renderer, 1);
    for (let i = 0; i < 3; i++) expect(pdfText((await renderer.render(doc(`OTHER-${i}`))).pdf)).toContain(`OTHER-${i}`);
    // Three renders done on the other slot while the hung one is still pending.
    expect(hungSettled).toBe(false);
    controller.abort(new Error('test over'));
    expect(await hung).toBe('Error: test over');
    const after = await Promise.all([renderer.render(doc('AFTER-A')), renderer.render(doc('AFTER-B'))]);
    expect(after.map(({ pdf }) => pdfText(pdf)).join()).toMatch(/AFTER-A[\s\S]*AFTER-B/);
  });

  it('cancels a render when the caller aborts', async () => {
    const controller = new AbortController();
    const pending = renderer.render({ ...neverReady, signal: controller.signal });
    await whenActive(renderer, 1);
    controller.abort(new Error('client went away'));
    // The caller's own reason, not a deadline's RENDER_TIMEOUT: the render deadline is a minute away.
    await expect(pending).rejects.toThrow('client went away');
    await until(() => renderer.stats().active === 0, 60_000, 'the slot to be returned');
    expect(pdfText((await renderer.render(doc('AFTER-ABORT'))).pdf)).toContain('AFTER-ABORT');
  });
});

describe('the render deadline', () => {
  it('times out a hung document with RENDER_TIMEOUT; its slot works again afterwards', async () => {
    // Short enough to wait for, long enough for an ordinary document on a busy machine.
    const renderer = await startTestRenderer({ concurrency: 2, timeoutMs: 10_000 });
    try {
      const hung = await outcome(
        renderer.render({ template: { html: '<p>HUNG</p><script>for (;;) {}</script>' }, data: {} }),
      );
      expect(hung).toBe('RENDER_TIMEOUT');
      const after = await Promise.all([renderer.render(doc('AFTER-HANG-A')), renderer.render(doc('AFTER-HANG-B'))]);
      expect(after.map(({ pdf }) => pdfText(pdf)).join()).toMatch(/AFTER-HANG-A[\s\S]*AFTER-HANG-B/);
    } finally {
      await renderer.close();
    }
  });
});

describe('recycling', () => {
  it('swaps the browser after N renders without failing any render', async () => {
    const renderer = await startTestRenderer({ concurrency: 2, recycleAfterRenders: 3 });
    try {
      const firstPid = renderer.stats().browserPid!;
      const firstProfile = profileDirOf(firstPid);
      // Two renders always in flight, so every swap happens under load.
      // Six renders with a quota of three: a swap, and usually a second, while renders are in flight.
      const total = 6;
      let next = 0;
      const texts = new Map<number, string>();
      await Promise.all(
        [0, 1].map(async () => {
          while (next < total) {
            const n = next++;
            texts.set(n, pdfText((await renderer.render(doc(`R-${n}-`))).pdf));
          }
        }),
      );
      expect(texts.size).toBe(total);
      for (const [n, text] of texts) expect(text).toContain(`R-${n}-`);
      const stats = renderer.stats();
      expect(stats.launches).toBeGreaterThanOrEqual(2);
      expect(stats.rendersFailed).toBe(0);
      await until(
        () => !isAlive(firstPid) && !existsSync(firstProfile),
        PROCESS_GONE_MS,
        'the first browser to be closed',
      );
    } finally {
      await renderer.close();
    }
  });
});

describe('DevTools command timeout', () => {
  it('is longer than both render deadlines, so a long job is ended by its own deadline, not by puppeteer', () => {
    // The defaults (30 s sync, 300 s for jobs): a job printing for 150 s once failed at 90 s.
    expect(protocolTimeoutMs({ timeoutMs: 30_000, asyncTimeoutMs: 300_000 })).toBeGreaterThan(300_000);
    expect(protocolTimeoutMs({ timeoutMs: 120_000, asyncTimeoutMs: 60_000 })).toBeGreaterThan(120_000);
  });
});
