/**
 * Ghostscript, as every part of the service runs it: under its ceilings (shared/child-limits.ts) and in
 * one pool shared fairly between accounts (scheduling/fair-scheduler.ts). Two callers: the PDF/A
 * conversion (finishing/pdfa.ts) and the picture of a PDF page (page-image.ts).
 */
import { availableParallelism } from 'node:os';
import { runLimited, type ChildCeiling, type LimitedRun } from '../shared/child-limits.js';
import { accountSlotsOf, FairScheduler, type PoolStats } from '../scheduling/fair-scheduler.js';
import { AppError } from '../shared/errors.js';

const GS_PATH = 'gs';
/** A stuck or hostile input must not hold a Ghostscript slot for ever. */
export const GS_TIMEOUT_MS = 60_000;
/** What one Ghostscript run may allocate: over ten times the most an honest document was measured to need (docs/operations.md, ceilings). */
const GS_MEMORY_CEILING_BYTES = 1024 ** 3;
/** Ghostscript's run under its ceilings; CPU: it renders on one thread, so the deadline's seconds bound its CPU too, also should the timer never fire. */
const GS_CEILING: ChildCeiling = {
  memoryBytes: GS_MEMORY_CEILING_BYTES,
  cpuSeconds: GS_TIMEOUT_MS / 1000,
  outOfMemory: /VMerror/,
};
/** Ghostscript is single-threaded and CPU-bound; leave a core to Chromium on small machines. */
const GS_MAX_CONCURRENT = Math.max(1, availableParallelism() - 1);
/** Runs waiting for Ghostscript, all accounts and one account: each may take seconds, so a longer line would wait out its deadline. */
const GS_QUEUE_LIMIT = 32;
const GS_ACCOUNT_QUEUE_LIMIT = 8;

/**
 * Who runs Ghostscript next, a strict pool: a hostile input keeps its run for up to GS_TIMEOUT_MS, so
 * one account never holds more than its cap of the runs.
 */
const ghostscript = new FairScheduler({
  name: 'ghostscript',
  limits: {
    capacity: GS_MAX_CONCURRENT,
    queueLimit: GS_QUEUE_LIMIT,
    accountSlots: accountSlotsOf(GS_MAX_CONCURRENT),
    workConserving: false,
    freeSlots: GS_MAX_CONCURRENT,
    accountQueueLimit: GS_ACCOUNT_QUEUE_LIMIT,
    accountFreeQueueLimit: GS_ACCOUNT_QUEUE_LIMIT,
  },
  words: { task: 'Ghostscript run', slot: 'Ghostscript slot' },
  busy: (reason) =>
    new AppError('SERVICE_UNAVAILABLE', 'Ghostscript (PDF/A conversion, page pictures) is busy; retry shortly', {
      details: { retryAfterSeconds: 2, reason },
    }),
});

/** Ghostscript runs in progress and waiting (for /metrics). */
export function ghostscriptPoolStats(): PoolStats {
  return ghostscript.stats();
}

/**
 * Runs `gs -q -dSAFER -dBATCH -dNOPAUSE …args` in `cwd`, in the account's turn of the pool, on a file
 * that must be a PDF: Ghostscript runs anything else as PostScript, a whole language.
 */
export function runGhostscript(
  pdf: Buffer,
  args: readonly string[],
  options: { cwd: string; accountId: string; notAPdf: () => Error },
): Promise<LimitedRun> {
  if (pdf.subarray(0, 5).toString('latin1') !== '%PDF-') return Promise.reject(options.notAPdf());
  return ghostscript.run(
    { accountId: options.accountId, kind: 'paid' },
    () =>
      runLimited(GS_PATH, ['-q', '-dSAFER', '-dBATCH', '-dNOPAUSE', ...args], {
        cwd: options.cwd,
        timeoutMs: GS_TIMEOUT_MS,
        maxBuffer: 16 << 20,
        ceiling: GS_CEILING,
      }),
    { maxWaitMs: GS_TIMEOUT_MS },
  );
}

/** Why a Ghostscript run did not succeed, in a person's words. */
export function describeGsFailure(run: LimitedRun): string {
  switch (run.ended) {
    case 'missing':
      return run.program === GS_PATH
        ? `"${GS_PATH}" was not found on PATH; install Debian's ghostscript package`
        : `"${run.program}" was not found on PATH; install Debian's util-linux package`;
    // Long documents hit this: the 33-page report took 26 s for 2b on an idle machine, over 60 s on a busy one.
    case 'timeout':
      return `it took longer than ${GS_TIMEOUT_MS} ms and was stopped; the document is too long for a Ghostscript pass`;
    case 'ceiling':
      return run.ceiling === 'memory'
        ? `it needed more than ${GS_MEMORY_CEILING_BYTES / 1024 ** 3} GiB of memory and was stopped; the document is too heavy for a Ghostscript pass (its pages' size, images or transparency)`
        : `it used more than ${GS_CEILING.cpuSeconds} s of CPU and was stopped; the document is too long for a Ghostscript pass`;
    case 'signal':
      return `Ghostscript ended by ${run.signal}`;
    case 'failed':
      return run.error.message;
    case 'exit': {
      // Skip the DOCINFO notice gs prints for Chromium's Creator on every run: it is not the failure.
      const lines = run.stderr.split('\n').filter((l) => l.trim() && !l.includes('DOCINFO'));
      return lines.slice(0, 3).join(' | ') || `exit code ${run.exitCode}`;
    }
  }
}
