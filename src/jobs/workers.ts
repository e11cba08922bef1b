/**
 * What a worker process runs: the job worker and the webhook delivery loop, under one worker id.
 * `pressroom serve` starts them (roles `all` and `worker`); `--role api` never does.
 */
import type { Config } from '../config.js';
import { createDeliveryLoop } from '../webhooks/delivery-loop.js';
import { createJobWorker, newWorkerId, type JobWorkerOptions } from './job-worker.js';

/** The job worker and the delivery loop of one process. */
export interface Workers {
  /** Starts claiming jobs and deliveries (idempotent; a stopped set does not start again). */
  start(): void;
  /** Stops claiming; in-flight work may finish within `graceMs`, the rest goes back to the queue. */
  stop(graceMs: number): Promise<void>;
}

/** What the workers need (built once in services.ts): the job worker's dependencies plus the config. */
export interface WorkersDeps extends Omit<JobWorkerOptions, 'jobs' | 'workerId' | 'metrics'> {
  config: Config;
  /** Counts job and webhook attempt outcomes (/metrics). */
  metrics?: NonNullable<JobWorkerOptions['metrics']> & { webhookAttempt(outcome: 'delivered' | 'failed' | 'retry'): void };
}

/** Creates the workers; nothing runs before `start()`. */
export function createWorkers(deps: WorkersDeps): Workers {
  const { config, logger } = deps;
  let started: { stop(graceMs: number): Promise<void> } | undefined;
  let stopping: Promise<void> | undefined;
  return {
    start() {
      if (started || stopping) return;
      const workerId = newWorkerId();
      const jobWorker = createJobWorker({ ...deps, jobs: config.jobs, workerId });
      const deliveries = createDeliveryLoop({
        database: deps.database,
        queue: deps.webhooks,
        workerId,
        ...config.webhooks,
        pollIntervalMs: config.jobs.pollIntervalMs,
        allowPrivateNetworks: config.allowPrivateNetworks,
        logger: logger.child({ component: 'webhooks', workerId }),
        metrics: deps.metrics,
      });
      jobWorker.start();
      deliveries.start();
      started = {
        // Jobs first: finishing one enqueues a webhook the delivery loop may still send in its grace.
        stop: async (graceMs) => {
          const deadline = Date.now() + graceMs;
          await jobWorker.stop(graceMs);
          await deliveries.stop(Math.max(0, deadline - Date.now()));
        },
      };
    },
    stop(graceMs) {
      if (!started) return Promise.resolve();
      // Concurrent calls (SIGTERM, then close()) share one stop.
      stopping ??= started.stop(graceMs);
      return stopping;
    },
  };
}
