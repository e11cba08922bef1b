/**
 * One paid result, charged on delivery: the flow every 1-credit endpoint that answers at once shares
 * (`POST /v1/pdf/create` and `POST /v1/image/create` through documents.ts, the PDF tools through
 * src/pdf-tools/), beside the ledger it posts to. The caller
 * brings two steps: `prepare` checks everything that can be checked for free, `produce` makes and
 * delivers the result. In order: the idempotency key (replay, 409, 422) → prepare → the credit,
 * reserved (402) → produce → the charge is posted. Any failure after the reservation voids it (exactly
 * one REFUND), then the error. When the charge is posted (docs/generation.md "What you are charged for"):
 * - with an Idempotency-Key: when the answer is stored for replay, in the same database transaction,
 *   so a client cut off from the answer gets it again by retrying, charged once;
 * - without one: when the answer has been handed to the client's connection (`settle(true)` from the
 *   HTTP layer); a connection that closed first voids it.
 * A process that dies in between holds a reservation nobody renews: charges.ts voids it after its lease.
 */
import type { Charges, Reservation } from './charges.js';
import type { Db } from '../db/database.js';
import { withTransaction } from '../db/database.js';
import type { FileService } from '../files/files.js';
import type { IdempotencyService, IdempotentRequest, KeyClaim } from '../idempotency/idempotency.js';
import { bodyBytes } from '../storage/blob-store.js';
import type { Delivery } from '../files/delivery.js';
import { AppError } from '../shared/errors.js';
import type { DocumentWarning } from '../shared/document-warnings.js';
import type { Logger } from '../shared/log.js';

/** The answer of a paid request. */
export interface GenerationResult {
  delivery: Delivery;
  creditsRemaining: number;
  /** The first answer to this Idempotency-Key, given again. */
  replayed: boolean;
  /** Non-fatal issues the answer carries: resources that did not load (issue 13), unknown image layers. */
  warnings?: DocumentWarning[];
  /** The checks that judged the e-invoice (`einvoice_checks`), with an e-invoice. */
  einvoiceChecks?: string;
  /** The accessibility check the PDF passed (`accessibility_checks`), under pdf_ua. */
  accessibilityChecks?: string;
  /**
   * Tells the service whether the answer reached the client (the HTTP layer calls it once the
   * response finished, or the connection closed before). Without an Idempotency-Key this posts or
   * voids the charge; otherwise (already posted with the stored answer) it does nothing.
   */
  settle(delivered: boolean): Promise<void>;
}

/** One paid piece of work as its service describes it. */
export interface ChargedWork<P> {
  accountId: string;
  /** The template recorded on the charge; null for work that has none (PDF tools). */
  templateId: string | null;
  /** Work without a template: the tool recorded on the charge instead (`merge`, …), so the ledger says what was paid for. */
  tool?: string;
  /** With an Idempotency-Key: a repeat gets the first answer, charged once. */
  idempotency?: IdempotentRequest;
  /** Checks what can be checked before any charge; a failure here costs nothing. */
  prepare(): Promise<P>;
  /** Makes and delivers the paid result; `execMs` is recorded on the charge; `warnings` go with the answer. */
  produce(prepared: P): Promise<Produced>;
  /** Called once the outcome is known: delivered (charged 1), replayed, connection closed or failed (0). */
  log?(outcome: string, charged: 0 | 1, extra?: Record<string, unknown>): void;
}

/** What `produce` made: where it went, how long it took, and any warnings for the answer. */
export interface Produced {
  delivery: Delivery;
  execMs: number;
  warnings?: DocumentWarning[];
  einvoiceChecks?: string;
  accessibilityChecks?: string;
}

/** The checks an answer names (e-invoice, accessibility), kept with a stored answer for its replays. */
type Checks = Pick<Produced, 'einvoiceChecks' | 'accessibilityChecks'>;
const checksOf = ({ einvoiceChecks, accessibilityChecks }: Checks): Checks => ({
  ...(einvoiceChecks ? { einvoiceChecks } : {}),
  ...(accessibilityChecks ? { accessibilityChecks } : {}),
});

/** Runs paid work: key, prepare, reserve, produce, post; voids once on failure. */
export interface ChargedRunner {
  run<P>(work: ChargedWork<P>): Promise<GenerationResult>;
}

export interface ChargedRunnerDeps {
  db: Db;
  charges: Charges;
  idempotency: IdempotencyService;
  files: FileService;
  logger: Logger;
}

/** How long a binary answer is kept for idempotent replays (the key's own lifetime). */
const BINARY_REPLAY_SECONDS = 86_400;

/** A delivery as stored with its idempotency key: JSON as it is, bytes as a reference to a stored file. */
type StoredDelivery =
  | ({
      delivery: Exclude<Delivery, { kind: 'binary' }>;
      creditsRemaining: number;
      warnings?: DocumentWarning[];
    } & Checks)
  | ({
      binaryFileId: string;
      filename: string;
      contentType?: string;
      creditsRemaining: number;
      warnings?: DocumentWarning[];
    } & Checks);

export function createChargedRunner(deps: ChargedRunnerDeps): ChargedRunner {
  const { db, charges, idempotency, files, logger } = deps;
  const settled = async () => undefined;

  async function storedAnswer(
    accountId: string,
    delivery: Delivery,
    creditsRemaining: number,
    warnings: DocumentWarning[] | undefined,
    checks: Checks,
  ): Promise<StoredDelivery> {
    const extra = {
      ...(warnings && warnings.length > 0 ? { warnings } : {}),
      ...checksOf(checks),
    };
    if (delivery.kind !== 'binary') return { delivery, creditsRemaining, ...extra };
    const file = await files.store(
      accountId,
      delivery.pdf,
      delivery.filename,
      BINARY_REPLAY_SECONDS,
      delivery.contentType,
    );
    return {
      binaryFileId: file.fileId,
      filename: delivery.filename,
      contentType: delivery.contentType,
      creditsRemaining,
      ...extra,
    };
  }

  async function replay(stored: StoredDelivery): Promise<GenerationResult> {
    if ('delivery' in stored)
      return {
        delivery: stored.delivery,
        creditsRemaining: stored.creditsRemaining,
        replayed: true,
        warnings: stored.warnings,
        ...checksOf(stored),
        settle: settled,
      };
    const pdf = await files.read(stored.binaryFileId);
    if (!pdf)
      throw new AppError(
        'FILE_NOT_FOUND',
        'The stored result of this idempotent request is gone; retry with a new Idempotency-Key.',
      );
    const delivery: Delivery = { kind: 'binary', pdf, filename: stored.filename, contentType: stored.contentType };
    return {
      delivery,
      creditsRemaining: stored.creditsRemaining,
      replayed: true,
      warnings: stored.warnings,
      ...checksOf(stored),
      settle: settled,
    };
  }

  /** Reserve → produce; on failure the reservation is voided (one REFUND) and the error rethrown. */
  async function produceReserved<P>(
    work: ChargedWork<P>,
    prepared: P,
  ): Promise<Produced & { reservation: Reservation }> {
    const reservation = await charges.reserve(
      work.accountId,
      work.tool !== undefined ? { tool: work.tool } : work.templateId,
      { request: true },
    );
    try {
      return { reservation, ...(await work.produce(prepared)) };
    } catch (error) {
      await charges.void(reservation);
      throw error;
    }
  }

  /** With a key: the charge is posted together with the stored answer, so a replay never charges again. */
  async function runOnce<P>(
    work: ChargedWork<P>,
    claim: Extract<KeyClaim, { kind: 'claimed' }>,
  ): Promise<GenerationResult> {
    try {
      const prepared = await work.prepare();
      const { reservation, delivery, execMs, warnings, ...produced } = await produceReserved(work, prepared);
      const checks = checksOf(produced);
      try {
        const answer = await storedAnswer(work.accountId, delivery, reservation.balance, warnings, checks);
        await withTransaction(db, async (trx) => {
          await idempotency.complete(claim, answer, trx);
          await charges.post(reservation, execMs, trx);
        });
      } catch (error) {
        await charges.void(reservation);
        throw error;
      }
      return {
        delivery,
        creditsRemaining: reservation.balance,
        replayed: false,
        warnings,
        ...checks,
        settle: settled,
      };
    } catch (error) {
      await idempotency.release(claim);
      throw error;
    }
  }

  /** Without a key: the charge waits for the HTTP layer to say whether the answer reached the client. */
  async function runUnkeyed<P>(work: ChargedWork<P>): Promise<GenerationResult> {
    const prepared = await work.prepare();
    const { reservation, delivery, execMs, warnings, ...produced } = await produceReserved(work, prepared);
    let settledOnce = false;
    return {
      delivery,
      creditsRemaining: reservation.balance,
      replayed: false,
      warnings,
      ...checksOf(produced),
      settle: async (delivered) => {
        if (settledOnce) return;
        settledOnce = true;
        try {
          if (delivered) await charges.post(reservation, execMs);
          else await charges.void(reservation);
          work.log?.(delivered ? 'delivered' : 'connection_closed', delivered ? 1 : 0, { exportType: delivery.kind });
        } catch (error) {
          // The reservation stays unresolved; once its lease runs out, recovery voids it (no charge).
          logger.error(
            { err: error, transactionRef: reservation.transactionRef },
            'could not post a delivered result; it will be refunded when its lease runs out',
          );
        }
      },
    };
  }

  return {
    async run(work) {
      if (!work.idempotency) return runUnkeyed(work);
      const claim = await idempotency.claim(work.accountId, work.idempotency);
      if (claim.kind === 'replay') {
        const replayed = await replay(claim.stored as StoredDelivery);
        work.log?.('replayed', 0);
        return replayed;
      }
      const result = await runOnce(work, claim);
      work.log?.('delivered', 1, { exportType: result.delivery.kind });
      return result;
    },
  };
}
