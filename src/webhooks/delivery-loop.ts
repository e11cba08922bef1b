/**
 * The delivery loop: runs wherever workers run, claims due deliveries (several processes may run it
 * against one database), makes one attempt each and records the outcome on the row. Restarting a
 * process resumes whatever is still pending. The claim is fair across accounts and gives one account
 * at most `accountConcurrency` attempts in flight (deliveries-store.ts), so a receiver that never
 * answers ties up a few of this loop's attempts for its own account, never all of them.
 */
import type { Agent, Dispatcher } from 'undici';
import type { DatabaseHandle } from '../db/database.js';
import type { WebhookDeliveryRow } from '../db/schema.js';
import { checkUrl } from '../net/check-url.js';
import { createGuardedDispatcher } from '../net/guarded-dispatcher.js';
import { createClaimLoop } from '../shared/claim-loop.js';
import { withRequestId, type Logger } from '../shared/log.js';
import * as store from './deliveries-store.js';
import { deliveryRetryDelayMs } from './webhook-schedule.js';
import { sendWebhook, type SendOutcome } from './webhook-sender.js';
import { webhookHeaders } from './webhook-signature.js';
import type { WebhookQueue } from './webhook-queue.js';

/** What a delivery loop needs; timeouts and schedule come from `config.webhooks`. */
export interface DeliveryLoopOptions {
  database: DatabaseHandle;
  queue: WebhookQueue;
  workerId: string;
  timeoutMs: number;
  maxAttempts: number;
  baseDelayMs: number;
  /** Attempts of one account in flight at once, every process together. */
  accountConcurrency: number;
  pollIntervalMs: number;
  allowPrivateNetworks: boolean;
  logger: Logger;
  /** Tests inject a dispatcher; by default the outbound guard's. */
  dispatcher?: Dispatcher;
  /** Counts attempt outcomes (/metrics). */
  metrics?: { webhookAttempt(outcome: 'delivered' | 'failed' | 'retry'): void };
}

/** One process's webhook delivery loop. */
export interface DeliveryLoop {
  start(): void;
  /** Stops claiming, lets attempts in flight end (each is bounded by the timeout), frees the rest. */
  stop(graceMs: number): Promise<void>;
}

/** Attempts one process makes at once. */
const CONCURRENCY = 16;

/** Creates a delivery loop; nothing is claimed before `start()`. */
export function createDeliveryLoop(o: DeliveryLoopOptions): DeliveryLoop {
  const { database, queue, workerId, logger } = o;
  // Opened by the first attempt and closed by stop(), so a loop that never sends holds no connections.
  let ownDispatcher: Agent | undefined;
  const dispatcher = (): Dispatcher =>
    o.dispatcher ??
    (ownDispatcher ??= createGuardedDispatcher(
      { allowPrivateNetworks: o.allowPrivateNetworks },
      { connectTimeoutMs: o.timeoutMs, headersTimeoutMs: o.timeoutMs, bodyTimeoutMs: o.timeoutMs },
    ));
  // The lease outlives the attempt's own deadline, so a live sender never loses it mid-attempt.
  const leaseMs = o.timeoutMs + 30_000;
  const timers = new Set<NodeJS.Timeout>();
  let running = false;

  async function attempt(row: WebhookDeliveryRow): Promise<SendOutcome> {
    // Checked again at send time: the URL was saved under the policy of its day.
    const verdict = checkUrl(row.url, { allowPrivateNetworks: o.allowPrivateNetworks, requireHttps: true });
    if (!verdict.ok) return { ok: false, status: null, error: `refused: ${verdict.detail}` };
    let secret: string | null = null;
    if (row.secret !== null) {
      try {
        secret = queue.openSecret(row.secret);
      } catch {
        return {
          ok: false,
          status: null,
          error: 'the signing secret cannot be decrypted (was PRESSROOM_SECRET_KEY changed?)',
        };
      }
    }
    const headers = webhookHeaders({
      id: row.id,
      timestampSeconds: Math.floor(Date.now() / 1000),
      body: row.payload,
      secret,
    });
    // The request that created the job, so the customer can match the webhook to its create-async call.
    if (row.request_id) headers['x-request-id'] = row.request_id;
    return sendWebhook(dispatcher(), { url: row.url, headers, body: row.payload, timeoutMs: o.timeoutMs });
  }

  async function deliver(row: WebhookDeliveryRow): Promise<void> {
    const outcome = await attempt(row);
    const now = Date.now();
    const last = row.attempts >= o.maxAttempts;
    const delay = outcome.ok || last ? 0 : deliveryRetryDelayMs(row.attempts, o.baseDelayMs);
    const recorded = await store.recordAttempt(
      database.db,
      row.id,
      workerId,
      {
        state: outcome.ok ? 'delivered' : last ? 'failed' : 'pending',
        status: outcome.status,
        error: outcome.ok ? null : outcome.error,
        nextAttemptAt: now + delay,
      },
      now,
    );
    const log = {
      webhookId: row.id,
      jobId: row.job_id,
      event: row.event,
      attempt: row.attempts,
      status: outcome.status,
    };
    if (outcome.ok) logger.info(log, 'webhook delivered');
    else if (last) logger.warn({ ...log, error: outcome.error }, 'webhook delivery failed for good');
    else logger.info({ ...log, error: outcome.error, retryInMs: delay }, 'webhook attempt failed; will retry');
    if (!recorded) logger.warn(log, 'webhook delivery lease was lost before its outcome was recorded');
    o.metrics?.webhookAttempt(outcome.ok ? 'delivered' : last ? 'failed' : 'retry');
    if (!outcome.ok && !last && running) wakeAfter(delay);
  }

  function wakeAfter(ms: number): void {
    const timer = setTimeout(() => (timers.delete(timer), kick()), ms);
    timer.unref();
    timers.add(timer);
  }

  function claim(limit: number): Promise<WebhookDeliveryRow[]> {
    return store.claimDeliveries(database, {
      workerId,
      limit,
      now: Date.now(),
      leaseMs,
      accountLimit: o.accountConcurrency,
    });
  }

  const loop = createClaimLoop({
    what: 'webhook deliveries',
    slots: CONCURRENCY,
    claim,
    run: (row: WebhookDeliveryRow) =>
      withRequestId(row.request_id, () =>
        deliver(row).catch((error) =>
          logger.error(
            { err: error, webhookId: row.id },
            'webhook delivery crashed; its lease will run out and it is retried',
          ),
        ),
      ),
    wakeups: queue,
    pollIntervalMs: o.pollIntervalMs,
    logger,
  });
  const kick = () => loop.kick();

  return {
    start() {
      if (running) return;
      running = true;
      loop.start();
    },
    async stop(graceMs) {
      running = false;
      for (const timer of timers) clearTimeout(timer);
      if (!(await loop.stop(graceMs))) {
        const released = await store.releaseDeliveries(database.db, workerId, Date.now()).catch(() => 0);
        logger.info({ released }, 'released unfinished webhook attempts');
      }
      const own = ownDispatcher;
      ownDispatcher = undefined;
      await own?.close().catch(() => undefined);
    },
  };
}
