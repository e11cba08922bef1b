/**
 * Enqueues webhook deliveries inside the transaction that finishes a job, and seals the customer's
 * signing secret at rest (AES-256-GCM under a key derived for this purpose only).
 */
import { EventEmitter } from 'node:events';
import type { DbOrTx } from '../db/database.js';
import { decryptSecret, deriveKey, encryptSecret } from '../shared/crypto.js';
import { randomId } from '../shared/ids.js';
import type { WebhookEvent } from './webhook-payloads.js';
import { insertDelivery } from './deliveries-store.js';

/** A notification to send. */
export interface NewDelivery {
  jobId: string;
  event: WebhookEvent;
  url: string;
  /** The job's sealed secret, copied as is (null → unsigned). */
  sealedSecret: string | null;
  /** The exact body. */
  payload: string;
  /** The job's request id, sent as `x-request-id` (null when the job has none). */
  requestId?: string | null;
}

/** The writing side of webhook deliveries. */
export interface WebhookQueue {
  /** Seals a `webhook_secret` for storage. */
  sealSecret(secret: string): string;
  /** Opens a sealed secret (only the delivery loop needs the clear text, for signing). */
  openSecret(sealed: string): string;
  /** Writes the delivery in the caller's transaction; false when the job already had one for the event. */
  enqueue(trx: DbOrTx, delivery: NewDelivery): Promise<boolean>;
  /** After the commit: wakes this process's delivery loop. */
  announce(): void;
  /** Calls `listener` on every announce. */
  subscribe(listener: () => void): () => void;
}

/** Standard Webhooks message ids look like `msg_…`; ours are 24 random characters after it. */
export const newWebhookId = (): string => `msg_${randomId(24)}`;

/** Creates the queue; the sealing key is derived from the master key for this purpose only. */
export function createWebhookQueue(secretKey: string): WebhookQueue {
  const key = deriveKey(secretKey, 'webhook-secrets');
  const local = new EventEmitter();
  local.setMaxListeners(0);
  return {
    sealSecret: (secret) => encryptSecret(key, secret),
    openSecret: (sealed) => decryptSecret(key, sealed),
    enqueue(trx, delivery) {
      const now = Date.now();
      return insertDelivery(trx, {
        id: newWebhookId(),
        job_id: delivery.jobId,
        event: delivery.event,
        url: delivery.url,
        secret: delivery.sealedSecret,
        payload: delivery.payload,
        state: 'pending',
        attempts: 0,
        next_attempt_at: now,
        locked_by: null,
        locked_until: null,
        last_status: null,
        last_error: null,
        created_at: now,
        updated_at: now,
        delivered_at: null,
        request_id: delivery.requestId ?? null,
      });
    },
    announce: () => void local.emit('enqueued'),
    subscribe(listener) {
      local.on('enqueued', listener);
      return () => local.off('enqueued', listener);
    },
  };
}
