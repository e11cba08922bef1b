/**
 * Readiness (`GET /readyz`): can this process serve a generation right now?
 *
 *   database  `select 1`                         required
 *   storage   read of a key that does not exist  required (a missing key answers "none"; an
 *             (no write: probes are frequent)     unreachable store or a missing bucket throws)
 *   renderer  a browser is up                     required ("starting" until the warm-up is done)
 *   einvoice_rules the official rules pack          never required: `ok: <the rule sets and pack>`, or
 *             (einvoice/rules/)                   `degraded: …` when one is required and missing, or is
 *                                                 damaged (e-invoice requests answer 503 then); absent
 *                                                 when none is installed and none is required
 *   redis     connection state                    never required: without Redis each process rate-
 *                                                 limits on its own (docs/rate-limits.md), so a Redis
 *                                                 outage must not take every API process out of the
 *                                                 load balancer; it shows as "degraded: …"
 *
 * Each check has its own deadline, so /readyz answers within `CHECK_TIMEOUT_MS` whatever hangs.
 * Failure details name the error code only (the endpoint is public); the log has the rest.
 */
import { sql } from 'kysely';
import type { Redis } from 'ioredis';
import type { DatabaseHandle } from '../db/database.js';
import type { PdfRenderer } from '../rendering/pdf-renderer.js';
import type { Logger } from '../shared/log.js';
import type { BlobStore } from '../storage/blob-store.js';

/** Each check's state: `ok` (or `ok: <what>`), `degraded: …` (still ready), or anything else (not ready). */
export type CheckResults = Record<string, string>;

/** A check whose state starts with this prefix does not make the process unready. */
export const DEGRADED = 'degraded';

const CHECK_TIMEOUT_MS = 3000;
/** A valid storage key (see storage-key.ts) that the service never writes. */
const STORAGE_PROBE_KEY = 'pressroom-readiness-probe/none';

export interface ReadinessDeps {
  database: DatabaseHandle;
  blobs: BlobStore;
  renderer: Pick<PdfRenderer, 'isReady'>;
  redis?: Redis;
  einvoiceRules?: { readiness(): Promise<string | null> };
  logger: Logger;
}

/** Ready when every check is `ok` or degraded. */
export function isReady(checks: CheckResults): boolean {
  return Object.values(checks).every(
    (state) => state === 'ok' || state.startsWith('ok: ') || state.startsWith(DEGRADED),
  );
}

function shortReason(error: unknown): string {
  const e = error as { code?: unknown; name?: unknown; cause?: { code?: unknown; name?: unknown } } | undefined;
  const code = e?.cause?.code ?? e?.code ?? e?.cause?.name ?? e?.name;
  return typeof code === 'string' && code !== 'Error' ? code : 'error';
}

async function probe(name: string, check: () => Promise<unknown>, logger: Logger): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(Object.assign(new Error(`no answer within ${CHECK_TIMEOUT_MS} ms`), { code: 'TIMEOUT' })),
          CHECK_TIMEOUT_MS,
        );
      }),
    ]);
    return 'ok';
  } catch (error) {
    logger.warn({ err: error, check: name }, 'readiness check failed');
    return `unavailable: ${shortReason(error)}`;
  } finally {
    clearTimeout(timer);
  }
}

/** Creates the readiness check of one process. */
export function createReadinessCheck(deps: ReadinessDeps): () => Promise<CheckResults> {
  const { database, blobs, renderer, redis, einvoiceRules, logger } = deps;
  return async () => {
    const [databaseState, storageState] = await Promise.all([
      probe('database', () => sql`select 1`.execute(database.db), logger),
      probe(
        'storage',
        async () => {
          const found = await blobs.get(STORAGE_PROBE_KEY);
          // Should never exist; if it does, release the stream.
          if (found && !Buffer.isBuffer(found.body))
            (found.body as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
        },
        logger,
      ),
    ]);
    const checks: CheckResults = {
      database: databaseState,
      storage: storageState,
      renderer: renderer.isReady() ? 'ok' : 'starting',
    };
    if (redis)
      checks.redis =
        redis.status === 'ready' ? 'ok' : `${DEGRADED}: ${redis.status} (rate limits fall back to per-process memory)`;
    const rules = einvoiceRules
      ? await einvoiceRules.readiness().catch((error: unknown) => {
          logger.warn({ err: error, check: 'einvoice_rules' }, 'readiness check failed');
          return `${DEGRADED}: the rules pack could not be read (${shortReason(error)})`;
        })
      : null;
    if (rules) checks.einvoice_rules = rules;
    return checks;
  };
}
