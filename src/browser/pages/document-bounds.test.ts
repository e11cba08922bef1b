/**
 * The page, byte and image-pixel bounds of one document (issue 15), on real Chromium with low
 * settings so each case stays small: what passes comes out whole, what does not fails with
 * DOCUMENT_TOO_LARGE naming the bound and its setting, and the renderer goes on.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AppError } from '../../shared/errors.js';
import { dataUri, noisePng, solidPng } from '../../../test/support/documents/png-images.js';
import { pdfInfo, pdfText, startTestRenderer } from '../../../test/support/documents/rendering-kit.js';
import type { PdfRenderer } from '../../rendering/pdf-renderer.js';

const MAX_PAGES = 5;
const MAX_BYTES = 100 * 1024;
const MAX_PIXELS = 1_000_000;

let renderer: PdfRenderer;

beforeAll(async () => {
  // One slot: every document goes to the same reused print page, as consecutive documents of
  // different customers do in production.
  renderer = await startTestRenderer({
    concurrency: 1,
    maxPages: MAX_PAGES,
    maxDocumentBytes: MAX_BYTES,
    maxImagePixels: MAX_PIXELS,
  });
});

afterAll(async () => {
  await renderer?.close();
});

const render = (html: string) => renderer.render({ template: { html }, data: {} }).then((r) => r.pdf);

async function refusal(html: string): Promise<AppError> {
  const error = await render(html).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe('DOCUMENT_TOO_LARGE');
  return error as AppError;
}

const pages = (n: number) =>
  Array.from({ length: n }, (_, i) => `<div style="page-break-after:always">Page ${i + 1} of ${n}</div>`).join('');

describe('pages (PRESSROOM_MAX_PAGES)', () => {
  it('prints a document of exactly the bound whole, page range and all', async () => {
    const pdf = await render(pages(MAX_PAGES));
    expect(pdfInfo(pdf).Pages).toBe(String(MAX_PAGES));
    expect(pdfText(pdf)).toContain(`Page ${MAX_PAGES} of ${MAX_PAGES}`);
  });

  it('prints a one-page document although its page range reaches past the end', async () => {
    expect(pdfInfo(await render('<p>short</p>')).Pages).toBe('1');
  });

  it.each([MAX_PAGES + 1, 40])('refuses a document of %i pages, naming the bound', async (n) => {
    const error = await refusal(pages(n));
    expect(error.details).toMatchObject({ bound: 'pages', limitPages: MAX_PAGES });
    expect(error.message).toContain(`more than ${MAX_PAGES} pages`);
    expect(error.message).toContain('PRESSROOM_MAX_PAGES');
  });
});

describe('PDF bytes (PRESSROOM_MAX_DOCUMENT_BYTES)', () => {
  it('stops a PDF that grows past the bound while it streams (an incompressible image)', async () => {
    // 300 × 300 RGB of noise: ~270 kB in the PDF, whatever the compression; 0.09 megapixels.
    const error = await refusal(`<img src="${dataUri(noisePng(300, 300))}">`);
    expect(error.details).toMatchObject({ bound: 'bytes', limitBytes: MAX_BYTES });
    expect(error.message).toContain('100 KiB');
    expect(error.message).toContain('PRESSROOM_MAX_DOCUMENT_BYTES');
  });

  it('leaves a PDF below the bound as it is', async () => {
    const pdf = await render(`<p>small enough</p><img src="${dataUri(noisePng(60, 60))}">`);
    expect(pdf.length).toBeLessThanOrEqual(MAX_BYTES);
    expect(pdfText(pdf)).toContain('small enough');
  });
});

describe('decoded image pixels (PRESSROOM_MAX_IMAGE_PIXELS)', () => {
  // 1,200 × 1,000 = 1.2 megapixels in 1–2 kB of PNG.
  const large = dataUri(solidPng(1200, 1000, 90));

  it.each([
    ['<img>', `<img src="${large}" style="width:20px">`],
    ['a CSS background', `<div style="width:20px;height:20px;background-image:url(${large})"></div>`],
    ['an SVG <image>', `<svg width="20" height="20"><image href="${large}" width="20" height="20"/></svg>`],
    [
      'images that are small one by one',
      [0, 1, 2].map((i) => `<img src="${dataUri(solidPng(600, 600, 10 + i))}" style="width:20px">`).join(''),
    ],
  ])('refuses %s past the bound, before printing', async (_name, html) => {
    const error = await refusal(`<p>text</p>${html}`);
    expect(error.details?.bound).toBe('image_pixels');
    expect(error.details?.imagePixels).toBeGreaterThan(MAX_PIXELS);
    expect(error.message).toMatch(
      /decode to 1\.\d megapixels, more than the 1 megapixels allowed \(PRESSROOM_MAX_IMAGE_PIXELS\)/,
    );
  });

  it('counts an image used many times once, as it is decoded once', async () => {
    const image = dataUri(solidPng(800, 800, 200)); // 0.64 megapixels
    const pdf = await render(
      `<p>three logos</p>${`<img src="${image}" style="width:30px">`.repeat(3)}<div style="width:30px;height:30px;background:url(${image})"></div>`,
    );
    expect(pdfText(pdf)).toContain('three logos');
  });

  it("never counts the images of the page's previous document, but counts them when the document uses them again", async () => {
    // The print page keeps its document's resource list from one document to the next.
    await refusal(`<img src="${large}" style="width:20px">`);
    const small = dataUri(solidPng(800, 800, 201)); // 0.64 megapixels; 1.84 with the one before
    expect(pdfText(await render(`<p>after a large one</p><img src="${small}" style="width:20px">`))).toContain(
      'after a large one',
    );
    const again = await refusal(
      `<p>the large one again, as a background</p><div style="width:20px;height:20px;background:url(${large})"></div>`,
    );
    expect(again.details?.bound).toBe('image_pixels');
    const inShadow = `<div><template shadowrootmode="open"><img src="${large}" style="width:20px"></template></div>`;
    expect((await refusal(inShadow)).details?.bound).toBe('image_pixels');
  });

  it('applies to documents with scripts too, counting the images their scripts add', async () => {
    const html = `<p>scripted</p><script>const i = new Image(); i.src = ${JSON.stringify(large)}; i.style.width = '20px'; document.body.append(i);</script>`;
    expect((await refusal(html)).details?.bound).toBe('image_pixels');
  });
});

describe('a long PDF spilled to a file as it streams (renderSpilling, the spool)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'pressroom-spill-'));
  });
  // One afterAll for the describe: it also undoes the full-disk mount below.
  afterAll(() => {
    try {
      if (mounted) execFileSync('umount', [full], { stdio: 'ignore' });
      rmSync(full, { recursive: true, force: true });
    } catch {
      // A mount that cannot be undone now is the machine's to clean up, not a failure of what was tested.
    }
    rmSync(dir, { recursive: true, force: true });
  });
  const spilled = (html: string, aboveBytes: number) =>
    renderer.renderSpilling(
      { template: { html }, data: {} },
      { path: join(dir, `${aboveBytes}-${html.length}.pdf`), aboveBytes },
    );

  it('writes a PDF that reaches the size to the file and answers with the file; a smaller one stays in memory', async () => {
    const long = await spilled(pages(3), 0);
    expect(Buffer.isBuffer(long.pdf)).toBe(false);
    const file = long.pdf as { path: string; size: number };
    const bytes = readFileSync(file.path);
    expect(file.size).toBe(bytes.length);
    expect(pdfInfo(bytes).Pages).toBe('3');
    expect(pdfText(bytes)).toContain('Page 3 of 3');
    const scripted = await spilled(
      '<p id="p"></p><script>document.getElementById("p").textContent = "drawn by a script";</script>',
      0,
    );
    expect(pdfText(readFileSync((scripted.pdf as { path: string }).path))).toContain('drawn by a script');

    const short = await spilled('<p>short</p>', 10 * 1024 * 1024);
    expect(Buffer.isBuffer(short.pdf)).toBe(true);
    expect(readdirSync(dir)).toHaveLength(2);
  });

  it('keeps the page and byte bounds, and leaves no file behind when it refuses', async () => {
    const before = readdirSync(dir);
    await expect(spilled(pages(MAX_PAGES + 1), 0)).rejects.toMatchObject({
      code: 'DOCUMENT_TOO_LARGE',
      details: { bound: 'pages' },
    });
    await expect(spilled(`<img src="${dataUri(noisePng(300, 300))}">`, 0)).rejects.toMatchObject({
      code: 'DOCUMENT_TOO_LARGE',
      details: { bound: 'bytes' },
    });
    expect(readdirSync(dir)).toEqual(before);
  });

  it('fails with STORAGE_ERROR, naming the spool, when the file cannot be created, and goes on', async () => {
    writeFileSync(join(dir, 'not-a-directory'), '');
    const failed = renderer.renderSpilling(
      { template: { html: pages(2) }, data: {} },
      { path: join(dir, 'not-a-directory', 'spilled.pdf'), aboveBytes: 0 },
    );
    await expect(failed).rejects.toMatchObject({
      code: 'STORAGE_ERROR',
      message: expect.stringContaining('spool directory: ENOTDIR'),
    });
    expect(pdfText(await render('<p>after the failed spool</p>'))).toContain('after the failed spool');
  });

  // A full disk: a 16 KiB tmpfs (mounting needs root, as the machines these tests run on have).
  const full = join(tmpdir(), `pressroom-full-spool-${process.pid}`);
  const mounted = (() => {
    try {
      mkdirSync(full, { recursive: true });
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=16k', 'tmpfs', full], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  })();

  it.skipIf(!mounted)(
    'fails with STORAGE_ERROR when the disk fills up mid-PDF, never passing a short file for the PDF, and leaves nothing',
    async () => {
      // ~30 KB of incompressible image: more than the disk holds, less than the byte bound.
      const failed = renderer.renderSpilling(
        { template: { html: `<img src="${dataUri(noisePng(100, 100))}">` }, data: {} },
        { path: join(full, 'spilled.pdf'), aboveBytes: 0 },
      );
      await expect(failed).rejects.toMatchObject({
        code: 'STORAGE_ERROR',
        message: expect.stringContaining('spool directory: ENOSPC'),
      });
      expect(readdirSync(full)).toEqual([]);
      expect(pdfText(await render('<p>after the full disk</p>'))).toContain('after the full disk');
    },
  );
});

it('renders an ordinary document after all of the above', async () => {
  expect(pdfText(await render('<h1>Still working</h1>'))).toContain('Still working');
  expect(renderer.stats().crashes).toBe(0);
});
