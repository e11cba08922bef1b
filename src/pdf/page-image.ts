/**
 * A picture of one page of a PDF: `POST /v1/image/create` on a PDF template (issue 42), what an
 * assistant or a template picker wants as a thumbnail, and the page an assistant looks at in an MCP
 * preview. Poppler's pdfinfo measures the page and pdftoppm rasterises it (Debian's poppler-utils,
 * already the service's for pdfsig), under their ceilings (shared/child-limits.ts) and in a pool of
 * their own shared fairly between accounts. PNG or JPEG: pdftoppm writes no WebP.
 *
 * The picture's size is decided from the page as printed, before pdftoppm runs (issue 49): a
 * template's CSS `@page` can make a page other than its page setup says, so the pixel bound is checked
 * against the measured page. A preview is fitted into a box and a byte bound instead (`pagePreview`).
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { runLimited, type ChildCeiling } from '../shared/child-limits.js';
import { accountSlotsOf, FairScheduler, type PoolStats } from '../scheduling/fair-scheduler.js';
import { AppError, ValidationError } from '../shared/errors.js';
import { countPages } from './pdf-page-count.js';

/** The formats pdftoppm writes. */
export type PageImageFormat = 'png' | 'jpeg';

/** One page of a document at a rendered page's cost: a few hundred ms; a stuck one is stopped (the whole task, every run in it). */
const PDFTOPPM_TIMEOUT_MS = 30_000;
/** A 4000-pixel-wide page needs ~100 MB; the ceiling leaves a hostile page no more than ten times that. */
const PDFTOPPM_CEILING: ChildCeiling = {
  memoryBytes: 1024 ** 3,
  cpuSeconds: PDFTOPPM_TIMEOUT_MS / 1000,
  outOfMemory: /std::bad_alloc|out of memory/i,
};
/** pdfinfo reads the page tree and one page's boxes: milliseconds. */
const PDFINFO_CEILING: ChildCeiling = {
  memoryBytes: 256 * 1024 ** 2,
  cpuSeconds: 10,
  outOfMemory: /std::bad_alloc|out of memory/i,
};
/**
 * Rasterising is single-threaded and CPU-bound: a slot per core but one, and at least two, so that
 * free work (MCP previews) can have one (an account's one) and never the last (issue 49).
 */
const PAGE_IMAGE_SLOTS = Math.max(2, availableParallelism() - 1);

const pool = new FairScheduler({
  name: 'page-images',
  limits: {
    capacity: PAGE_IMAGE_SLOTS,
    queueLimit: 32,
    accountSlots: accountSlotsOf(PAGE_IMAGE_SLOTS),
    workConserving: false,
    freeSlots: PAGE_IMAGE_SLOTS - 1,
    accountFreeSlots: 1,
    accountQueueLimit: 8,
    accountFreeQueueLimit: 8,
  },
  words: { task: 'page picture', freeTask: 'preview picture', slot: 'page picture slot' },
  busy: (reason) =>
    new AppError('SERVICE_UNAVAILABLE', 'Page pictures are busy; retry shortly', {
      details: { retryAfterSeconds: 2, reason },
    }),
});

/** Page pictures in progress and waiting (for /metrics). */
export function pageImagePoolStats(): PoolStats {
  return pool.stats();
}

/** A picture of a page, with what it is. */
export interface PagePicture {
  readonly bytes: Buffer;
  readonly format: PageImageFormat;
  readonly width: number;
  readonly height: number;
  /** The page as printed, in points (1/72 in), turned as it is shown. */
  readonly page: { readonly width: number; readonly height: number };
}

/**
 * Page `page` of `pdf` as a `width`-pixel-wide image (the height follows the page); a page past the
 * end, or a picture past `maxPixels` (measured on the printed page), is a 422.
 */
export async function pageImage(
  pdf: Buffer,
  options: {
    page: number;
    width: number;
    format: PageImageFormat;
    quality: number;
    accountId: string;
    maxPixels: number;
  },
): Promise<Buffer> {
  await checkPageExists(pdf, options.page);
  return pool.run(
    { accountId: options.accountId, kind: 'paid' },
    () =>
      withPdfFile(pdf, async (dir, deadline) => {
        const page = await pageSize(dir, options.page, deadline);
        const height = Math.max(1, Math.round((options.width * page.height) / page.width));
        if (options.width * height > options.maxPixels) {
          throw new ValidationError([
            {
              loc: ['body', 'width'],
              msg: `would make a ${options.width} × ${height} image of page ${options.page} (${Math.round(page.width)} × ${Math.round(page.height)} pt as printed); at most ${options.maxPixels} pixels are rendered. Ask for a smaller width`,
              type: 'value_error',
            },
          ]);
        }
        return rasterise(dir, { ...options, height }, deadline);
      }),
    { maxWaitMs: PDFTOPPM_TIMEOUT_MS },
  );
}

/** The bounds of a preview picture: the box the page is fitted into, and the bytes it may take. */
export interface PreviewBounds {
  readonly maxWidth: number;
  readonly maxHeight: number;
  readonly maxBytes: number;
}

/**
 * Page `page` of a preview, fitted whole into `maxWidth` × `maxHeight` pixels, as PNG; as JPEG when the
 * PNG would pass `maxBytes` (a photo, noise), at half the size when even that would. Free work: it
 * waits behind paid pictures and holds one slot of an account at most. A picture that stays past
 * `maxBytes` is a 422 PDF_TOO_COMPLEX.
 */
export async function pagePreview(
  pdf: Buffer,
  options: { page: number; accountId: string; bounds: PreviewBounds },
): Promise<PagePicture> {
  await checkPageExists(pdf, options.page);
  const { maxWidth, maxHeight, maxBytes } = options.bounds;
  return pool.run(
    { accountId: options.accountId, kind: 'free' },
    () =>
      withPdfFile(pdf, async (dir, deadline) => {
        const page = await pageSize(dir, options.page, deadline);
        const scale = Math.min(maxWidth / page.width, maxHeight / page.height);
        const fit = (length: number, bound: number, factor: number) =>
          Math.max(1, Math.min(Math.floor(bound * factor), Math.round(length * scale * factor)));
        const size = (factor: number) => ({
          width: fit(page.width, maxWidth, factor),
          height: fit(page.height, maxHeight, factor),
        });
        const attempts: { format: PageImageFormat; quality: number; factor: number }[] = [
          { format: 'png', quality: 100, factor: 1 },
          { format: 'jpeg', quality: 80, factor: 1 },
          { format: 'jpeg', quality: 70, factor: 0.5 },
        ];
        for (const attempt of attempts) {
          const { width, height } = size(attempt.factor);
          const bytes = await rasterise(
            dir,
            { page: options.page, width, height, format: attempt.format, quality: attempt.quality },
            deadline,
          );
          if (bytes.length <= maxBytes) return { bytes, format: attempt.format, width, height, page };
        }
        throw new AppError(
          'PDF_TOO_COMPLEX',
          `Page ${options.page}'s picture stays larger than ${maxBytes} bytes even as a ${size(0.5).width}-pixel-wide JPEG. Nothing was charged.`,
        );
      }),
    { maxWaitMs: PDFTOPPM_TIMEOUT_MS },
  );
}

async function checkPageExists(pdf: Buffer, page: number): Promise<void> {
  const pages = await countPages(pdf);
  if (page > pages) {
    throw new ValidationError([
      {
        loc: ['body', 'page'],
        msg: `the document has ${pages} page${pages === 1 ? '' : 's'}; ask for one of them`,
        type: 'value_error',
      },
    ]);
  }
}

/** Runs `work` with `pdf` written to `in.pdf` in a fresh folder, removed afterwards; `deadline` ends every run in it. */
async function withPdfFile<T>(pdf: Buffer, work: (dir: string, deadline: number) => Promise<T>): Promise<T> {
  const deadline = performance.now() + PDFTOPPM_TIMEOUT_MS;
  const dir = await mkdtemp(join(tmpdir(), 'pressroom-page-image-'));
  try {
    await writeFile(join(dir, 'in.pdf'), pdf);
    return await work(dir, deadline);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Page `page`'s size in points as shown (pdfinfo's size, turned by its /Rotate). */
async function pageSize(dir: string, page: number, deadline: number): Promise<{ width: number; height: number }> {
  const run = await runLimited('pdfinfo', ['-f', String(page), '-l', String(page), 'in.pdf'], {
    cwd: dir,
    timeoutMs: leftMs(deadline),
    maxBuffer: 1 << 16,
    ceiling: PDFINFO_CEILING,
  });
  checkRun(run);
  const stdout = run.ended === 'exit' ? run.stdout : '';
  const size = /Page\s+\d+\s+size:\s+([\d.]+) x ([\d.]+)/.exec(stdout);
  const rotation = Number(/Page\s+\d+\s+rot:\s+(\d+)/.exec(stdout)?.[1] ?? 0);
  const width = Number(size?.[1]);
  const height = Number(size?.[2]);
  if (!(width > 0 && height > 0))
    throw new AppError('RENDER_FAILED', 'The page could not be measured to be turned into an image.');
  return rotation % 180 === 90 ? { width: height, height: width } : { width, height };
}

async function rasterise(
  dir: string,
  options: { page: number; width: number; height: number; format: PageImageFormat; quality: number },
  deadline: number,
): Promise<Buffer> {
  const format = options.format === 'jpeg' ? ['-jpeg', '-jpegopt', `quality=${options.quality}`] : ['-png'];
  const args = [
    '-f',
    String(options.page),
    '-l',
    String(options.page),
    '-singlefile',
    '-scale-to-x',
    String(options.width),
    '-scale-to-y',
    String(options.height),
    ...format,
    'in.pdf',
    'page',
  ];
  const run = await runLimited('pdftoppm', args, {
    cwd: dir,
    timeoutMs: leftMs(deadline),
    maxBuffer: 1 << 20,
    ceiling: PDFTOPPM_CEILING,
  });
  checkRun(run);
  return await readFile(join(dir, options.format === 'jpeg' ? 'page.jpg' : 'page.png'));
}

/** What is left of the task's deadline for one more run (at least a moment, so a late run fails as a timeout). */
function leftMs(deadline: number): number {
  return Math.max(1, Math.round(deadline - performance.now()));
}

function checkRun(run: Awaited<ReturnType<typeof runLimited>>): void {
  if (run.ended === 'ceiling')
    throw new AppError('PDF_TOO_COMPLEX', 'The page needed more memory or CPU time than one picture may use.');
  if (run.ended === 'timeout')
    throw new AppError(
      'RENDER_TIMEOUT',
      `The page's picture took longer than ${PDFTOPPM_TIMEOUT_MS} ms and was stopped.`,
    );
  if (run.ended === 'missing')
    throw new AppError(
      'RENDER_FAILED',
      `"${run.program}" was not found on PATH; install Debian's poppler-utils package.`,
    );
  if (run.ended !== 'exit' || run.exitCode !== 0)
    throw new AppError('RENDER_FAILED', 'The page could not be turned into an image.');
}
