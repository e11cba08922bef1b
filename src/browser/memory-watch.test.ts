/**
 * The memory bound (PRESSROOM_RENDERER_MEMORY_MB, issue 15: one PNG took a Chromium process to
 * 3.1 GB), on real Chromium with a low bound: the process that passes it is killed, only its render
 * fails (DOCUMENT_TOO_LARGE, memory), a document rendered beside it comes out, and the browser is
 * neither restarted nor counted as crashed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../shared/errors.js';
import { dataUri, solidPng } from '../../test/support/documents/png-images.js';
import { pdfText, startTestRenderer } from '../../test/support/documents/rendering-kit.js';
import type { PdfRenderer } from '../rendering/pdf-renderer.js';

/** Well above an idle renderer (~110–190 MB resident here) and print compositor (~40 MB). */
const LIMIT_MB = 400;

let renderer: PdfRenderer;

beforeAll(async () => {
  // The image test needs its 64 megapixels past the pixel bound's check, to reach the compositor.
  renderer = await startTestRenderer({ concurrency: 2, rendererMemoryMb: LIMIT_MB, maxImagePixels: 500_000_000 });
});

afterAll(async () => {
  await renderer?.close();
});

const render = (html: string) => renderer.render({ template: { html }, data: {} }).then((r) => r.pdf);

/** Renders `heavy` and an ordinary document at the same time; the heavy one's error and the other's text. */
async function besideAnOrdinaryOne(heavy: string): Promise<{ error: AppError; text: string }> {
  const [failed, ordinary] = await Promise.allSettled([render(heavy), render('<p>rendered beside it</p>')]);
  expect(failed.status).toBe('rejected');
  expect(ordinary.status).toBe('fulfilled');
  const error = (failed as PromiseRejectedResult).reason as AppError;
  expect(error).toBeInstanceOf(AppError);
  return { error, text: pdfText((ordinary as PromiseFulfilledResult<Buffer>).value) };
}

describe.sequential('a process past the memory bound is killed and only its render fails', () => {
  it('a script that allocates without end: its renderer', async () => {
    // 12 × 64 MB, every page touched: the renderer passes 400 MB long before the script is done.
    const heavy =
      '<p>heavy</p><script>window.kept = []; for (let i = 0; i < 12; i++) { const b = new Uint8Array(64 << 20); b.fill(i + 1); window.kept.push(b); }</script>';
    const { error, text } = await besideAnOrdinaryOne(heavy);
    expect(error.code).toBe('DOCUMENT_TOO_LARGE');
    expect(error.details).toMatchObject({ bound: 'memory', limitMb: LIMIT_MB });
    expect(error.message).toContain(`more than ${LIMIT_MB} MB of memory in Chromium (PRESSROOM_RENDERER_MEMORY_MB)`);
    expect(text).toContain('rendered beside it');
  });

  it('a 64-megapixel image (a few hundred kB of PNG): the print compositor that decodes it', async () => {
    // Alone: with another print in flight when the compositor is killed, which print owned it may
    // only be known once that other print returns (print-tracker.ts), and a print that returns
    // right after the kill leaves it undecided (the owner then ends at its deadline, RENDER_TIMEOUT).
    const heavy = `<p>photo</p><img style="width:100%" src="${dataUri(solidPng(8000, 8000, 77))}">`;
    const error = await render(heavy).then(
      () => undefined,
      (e: unknown) => e as AppError,
    );
    expect(error?.code).toBe('DOCUMENT_TOO_LARGE');
    expect(error?.details).toMatchObject({ bound: 'memory', limitMb: LIMIT_MB });
  });

  it('the same browser renders the next document', async () => {
    expect(pdfText(await render('<h1>Next</h1>'))).toContain('Next');
    const stats = renderer.stats();
    expect(stats.launches).toBe(1);
    expect(stats.crashes).toBe(0);
  });
});
