/**
 * A picture of one page of a PDF: `POST /v1/image/create` on a PDF template (issue 42), what an
 * assistant or a template picker wants as a thumbnail. Poppler's pdftoppm (Debian's poppler-utils,
 * already the service's for pdfsig) rasterises the page, under its ceilings (shared/child-limits.ts)
 * and in a pool of its own shared fairly between accounts. PNG or JPEG: pdftoppm writes no WebP.
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

/** One page of a document at a rendered page's cost: a few hundred ms; a stuck one is stopped. */
const PDFTOPPM_TIMEOUT_MS = 30_000;
/** A 4000-pixel-wide page needs ~100 MB; the ceiling leaves a hostile page no more than ten times that. */
const PDFTOPPM_CEILING: ChildCeiling = {
  memoryBytes: 1024 ** 3,
  cpuSeconds: PDFTOPPM_TIMEOUT_MS / 1000,
  outOfMemory: /std::bad_alloc|out of memory/i,
};
/** Rasterising is single-threaded and CPU-bound; leave a core to Chromium on small machines. */
const PAGE_IMAGE_SLOTS = Math.max(1, availableParallelism() - 1);

const pool = new FairScheduler({
  name: 'page-images',
  limits: {
    capacity: PAGE_IMAGE_SLOTS,
    queueLimit: 32,
    accountSlots: accountSlotsOf(PAGE_IMAGE_SLOTS),
    workConserving: false,
    freeSlots: PAGE_IMAGE_SLOTS,
    accountQueueLimit: 8,
    accountFreeQueueLimit: 8,
  },
  words: { task: 'page picture', slot: 'page picture slot' },
  busy: (reason) =>
    new AppError('SERVICE_UNAVAILABLE', 'Page pictures are busy; retry shortly', {
      details: { retryAfterSeconds: 2, reason },
    }),
});

/** Page pictures in progress and waiting (for /metrics). */
export function pageImagePoolStats(): PoolStats {
  return pool.stats();
}

/** Page `page` of `pdf` as a `width`-pixel-wide image (the height follows the page); a page past the end is a 422 at `body.page`. */
export async function pageImage(
  pdf: Buffer,
  options: { page: number; width: number; format: PageImageFormat; quality: number; accountId: string },
): Promise<Buffer> {
  const pages = await countPages(pdf);
  if (options.page > pages) {
    throw new ValidationError([
      {
        loc: ['body', 'page'],
        msg: `the document has ${pages} page${pages === 1 ? '' : 's'}; ask for one of them`,
        type: 'value_error',
      },
    ]);
  }
  return pool.run({ accountId: options.accountId, kind: 'paid' }, () => rasterise(pdf, options), {
    maxWaitMs: PDFTOPPM_TIMEOUT_MS,
  });
}

async function rasterise(
  pdf: Buffer,
  options: { page: number; width: number; format: PageImageFormat; quality: number },
): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'pressroom-page-image-'));
  try {
    await writeFile(join(dir, 'in.pdf'), pdf);
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
      '-1',
      ...format,
      'in.pdf',
      'page',
    ];
    const run = await runLimited('pdftoppm', args, {
      cwd: dir,
      timeoutMs: PDFTOPPM_TIMEOUT_MS,
      maxBuffer: 1 << 20,
      ceiling: PDFTOPPM_CEILING,
    });
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
    return await readFile(join(dir, options.format === 'jpeg' ? 'page.jpg' : 'page.png'));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
