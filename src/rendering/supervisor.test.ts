/** Chromium is warm and supervised: crashes, hangs, queueing, recycling and a clean shutdown. */
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../shared/errors.js';
import { descendants, pdfText, processesMentioning, testRenderer } from '../../test/support/rendering-kit.js';
import type { PdfRenderer } from './pdf-renderer.js';

const opened: PdfRenderer[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((r) => r.close()));
});

function open(...args: Parameters<typeof testRenderer>): PdfRenderer {
  const renderer = testRenderer(...args);
  opened.push(renderer);
  return renderer;
}

const doc = (marker: string) => ({ template: { html: '<p>{{ m }}</p>' }, data: { m: marker } });
/** A scripted document that takes about `ms` to become ready. */
const slowDoc = (ms: number) => ({ template: { html: `<p>SLOW</p><script>window.pressroomReady = new Promise((r) => setTimeout(r, ${ms}));</script>` }, data: {} });

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

async function eventually(check: () => boolean, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('lifecycle', () => {
  it('starts lazily, warms up on demand, and close() leaves no process and no profile directory', async () => {
    const renderer = open();
    expect(renderer.isReady()).toBe(false);
    expect(renderer.stats().browserPid).toBeUndefined();
    await renderer.warmUp();
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
  });
});

describe('crash recovery', () => {
  it('replaces a browser killed with SIGKILL mid-render; the next render works', async () => {
    const renderer = open({ concurrency: 2 });
    await renderer.warmUp();
    const pid = renderer.stats().browserPid!;
    const profile = profileDirOf(pid);
    const inFlight = renderer.render(slowDoc(2_000)).then(
      () => 'ok',
      (e: unknown) => (e as AppError).code,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    process.kill(pid, 'SIGKILL');
    expect(await inFlight).toBe('RENDER_FAILED');
    expect(pdfText((await renderer.render(doc('AFTER-CRASH'))).pdf)).toContain('AFTER-CRASH');
    const stats = renderer.stats();
    expect(stats.crashes).toBe(1);
    expect(stats.browserPid).not.toBe(pid);
    await eventually(() => !existsSync(profile) && processesMentioning(profile).length === 0);
  });

  it.each(['compartment', 'worker'] as const)(
    'fails a template evaluation at once with RENDER_FAILED when the browser is killed under it (%s)',
    async (evaluator) => {
      // The template limit is far away: the lost browser, not a deadline, must end the render.
      const renderer = open({ concurrency: 1, templateTimeoutMs: 15_000, evaluator });
      await renderer.warmUp();
      const pid = renderer.stats().browserPid!;
      const started = Date.now();
      const inFlight = renderer.render({ template: { html: '{% for i in range(0, 100000) %}{% for j in range(0, 100000) %}{% endfor %}{% endfor %}' }, data: {} }).then(
        () => ({ code: 'ok', at: Date.now() }),
        (e: unknown) => ({ code: (e as AppError).code, at: Date.now() }),
      );
      await new Promise((resolve) => setTimeout(resolve, 400));
      process.kill(pid, 'SIGKILL');
      const { code, at } = await inFlight;
      expect(code).toBe('RENDER_FAILED');
      expect(at - started).toBeLessThan(5_000);
      expect(pdfText((await renderer.render(doc('AFTER-KILL'))).pdf)).toContain('AFTER-KILL');
    },
  );

  it('replaces crashed pages (killed renderer processes); the next render works', async () => {
    const renderer = open({ concurrency: 1 });
    await renderer.warmUp();
    const pid = renderer.stats().browserPid!;
    for (const child of descendants(pid, '--type=renderer')) process.kill(child, 'SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(pdfText((await renderer.render(doc('AFTER-PAGE-CRASH'))).pdf)).toContain('AFTER-PAGE-CRASH');
    expect(renderer.stats().browserPid).toBe(pid);
  });
});

describe('limits', () => {
  it('refuses work beyond the queue limit with RENDERER_BUSY', async () => {
    const renderer = open({ concurrency: 1, queueLimit: 1 });
    await renderer.warmUp();
    const results = await Promise.allSettled([renderer.render(slowDoc(800)), renderer.render(doc('queued')), renderer.render(doc('refused'))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect((results[2] as PromiseRejectedResult).reason).toMatchObject({ code: 'RENDERER_BUSY', details: { retryAfterSeconds: 2 } });
  });

  it('times out a hung document with RENDER_TIMEOUT without holding up the other slot', async () => {
    const renderer = open({ concurrency: 2, timeoutMs: 4_000 });
    await renderer.warmUp();
    const started = Date.now();
    const hung = renderer.render({ template: { html: '<p>HUNG</p><script>for (;;) {}</script>' }, data: {} }).then(
      () => ({ error: undefined, at: Date.now() }),
      (e: unknown) => ({ error: e as AppError, at: Date.now() }),
    );
    const others: string[] = [];
    for (let i = 0; i < 3; i++) others.push(pdfText((await renderer.render(doc(`OTHER-${i}`))).pdf));
    const othersDoneAt = Date.now();
    expect(others.join()).toContain('OTHER-2');
    const { error, at } = await hung;
    expect(error?.code).toBe('RENDER_TIMEOUT');
    // The other slot kept working while the hung one waited for its deadline.
    expect(othersDoneAt).toBeLessThan(at);
    expect(at - started).toBeLessThan(8_000);
    expect(pdfText((await renderer.render(doc('AFTER-HANG'))).pdf)).toContain('AFTER-HANG');
  });

  it('cancels a render when the caller aborts', async () => {
    const renderer = open({ concurrency: 1 });
    await renderer.warmUp();
    const controller = new AbortController();
    const pending = renderer.render({ ...slowDoc(3_000), signal: controller.signal });
    setTimeout(() => controller.abort(new Error('client went away')), 200);
    await expect(pending).rejects.toThrow('client went away');
    expect(pdfText((await renderer.render(doc('AFTER-ABORT'))).pdf)).toContain('AFTER-ABORT');
  });
});

describe('recycling', () => {
  it('swaps the browser after N renders without failing any render', async () => {
    const renderer = open({ concurrency: 2, recycleAfterRenders: 3 });
    await renderer.warmUp();
    const firstPid = renderer.stats().browserPid!;
    const firstProfile = profileDirOf(firstPid);
    // Two renders always in flight, so every swap happens under load.
    let next = 0;
    const texts = new Map<number, string>();
    await Promise.all(
      [0, 1].map(async () => {
        while (next < 12) {
          const n = next++;
          texts.set(n, pdfText((await renderer.render(doc(`R-${n}-`))).pdf));
        }
      }),
    );
    expect(texts.size).toBe(12);
    for (const [n, text] of texts) expect(text).toContain(`R-${n}-`);
    const stats = renderer.stats();
    expect(stats.launches).toBeGreaterThanOrEqual(2);
    expect(stats.rendersFailed).toBe(0);
    await eventually(() => !isAlive(firstPid) && !existsSync(firstProfile));
  });
});
