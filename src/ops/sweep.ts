/** The periodic sweep of what has expired: download files, idempotency keys, finished jobs past retention, stale spool files. */
import type { Logger } from '../shared/log.js';

/** Each of these is already unusable when it expires, so deleting it a minute late costs only disk. */
export const SWEEP_INTERVAL_MS = 60_000;

/** The parts that keep expiring things; each `sweep` answers how many it deleted. */
export interface Sweepable {
  files: { sweep(): Promise<number> };
  idempotency: { sweep(): Promise<number> };
  jobs: { sweep(): Promise<number> };
  spool: { sweep(): Promise<number> };
}

/** Sweeps every SWEEP_INTERVAL_MS (a failed sweep is retried at the next); the answer stops it. */
export function startSweep(parts: Sweepable, logger: Logger): () => void {
  const timer = setInterval(() => {
    Promise.all([parts.files.sweep(), parts.idempotency.sweep(), parts.jobs.sweep(), parts.spool.sweep()])
      .then(([filesRemoved, keysRemoved, jobsRemoved, spoolFilesRemoved]) => {
        if (filesRemoved + keysRemoved + jobsRemoved + spoolFilesRemoved > 0) {
          logger.info(
            { filesRemoved, keysRemoved, jobsRemoved, spoolFilesRemoved },
            'swept expired files, idempotency keys, finished jobs past retention and stale spool files',
          );
        }
      })
      .catch((error) => logger.warn({ err: error }, 'sweep failed; will retry'));
  }, SWEEP_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
