/**
 * Signs a PDF with a stored certificate (PAdES through @libpdf/core): B-B, or B-T with a time-stamp
 * from an RFC 3161 authority (tsa.ts). The signature is an incremental update, so the bytes before it
 * — a PDF/A file's included — are kept exactly; it is the document's last change. An optional visible
 * mark (a framed note with the signer, the time and the reason) is drawn into the named page's content
 * in the same update (signing-worker.ts), so the signature covers it too; libpdf 0.4 gives the
 * signature field itself an invisible widget.
 *
 * Signing is checked before any charge (`prepare`: the certificate exists and is valid, a time-stamp
 * authority is configured and allowed, the visible page exists when the page count is known), and runs
 * in a slot of its own fair pool (scheduling/), on a thread of that slot (signing-threads.ts). The same pool
 * runs verifications (verify.ts), as free work.
 */
import type { Dispatcher } from 'undici';
import { accountSlotsOf, FairScheduler, type PoolStats, type TaskKind } from '../scheduling/fair-scheduler.js';
import { AppError, ValidationError } from '../shared/errors.js';
import type { CertificateService } from './certificates.js';
import { SigningThreads } from './signing-threads.js';
import { checkTsaUrl, guardedTimestampAuthority } from './tsa.js';
import { verifySignatures, type SignatureReport } from './verify.js';

/** Where a visible signature's mark goes: a 1-based page and a box in PDF points from its lower left corner. */
export interface VisibleSignature {
  page: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

/** A signature as a request asks for it (`sign` on create, the body of /v1/pdf-tools/sign). */
export interface SignatureOptions {
  /** The name of one of the account's certificates. */
  certificate: string;
  reason?: string | null;
  location?: string | null;
  contactInfo?: string | null;
  /** B-T: a time-stamp from the TSA. @defaultValue false */
  timestamp?: boolean | null;
  /** The account's own TSA; without it, PRESSROOM_TSA_URL. */
  tsaUrl?: string | null;
  visible?: VisibleSignature | null;
}

/** Who signs and where refusals point (`["body","sign"]` on create, `["body"]` for the tool). */
export interface SignatureContext {
  accountId: string;
  kind: TaskKind;
  loc: (string | number)[];
}

export interface Signing {
  /** Everything checkable before a charge; `pages` when the document is already known (the tool). */
  prepare(options: SignatureOptions, context: SignatureContext, pages?: number): Promise<void>;
  /** The signed PDF. */
  sign(pdf: Uint8Array, options: SignatureOptions, context: SignatureContext): Promise<Buffer>;
  /** The signature report of a PDF (verify.ts), in a free slot of the same pool. */
  verify(pdf: Buffer, accountId: string): Promise<SignatureReport>;
  stats(): PoolStats;
  /** Ends the signing threads. */
  close(): Promise<void>;
}

export interface SigningDeps {
  certificates: CertificateService;
  /** PRESSROOM_TSA_URL */
  tsaUrl?: string;
  allowPrivateNetworks: boolean;
  /** The guarded dispatcher time-stamp requests go through. */
  dispatcher: Dispatcher;
  /** Signatures made at once. */
  concurrency: number;
  /** Longest wait for a slot. */
  maxWaitMs: number;
}

/** Signatures that may wait for a slot, all accounts together; one account may fill a quarter. */
const SIGNING_QUEUE_LIMIT = 100;

function refuse(loc: (string | number)[], msg: string, type: string): never {
  throw new ValidationError([{ loc, msg, type }]);
}

export function createSigning(deps: SigningDeps): Signing {
  const threads = new SigningThreads();
  const slots = new FairScheduler({
    name: 'signing',
    limits: {
      capacity: deps.concurrency,
      queueLimit: SIGNING_QUEUE_LIMIT,
      accountSlots: accountSlotsOf(deps.concurrency),
      workConserving: false,
      freeSlots: deps.concurrency,
      accountQueueLimit: Math.ceil(SIGNING_QUEUE_LIMIT / 4),
      accountFreeQueueLimit: Math.ceil(SIGNING_QUEUE_LIMIT / 4),
    },
    words: { task: 'signature', slot: 'signing slot' },
    busy: (reason) =>
      new AppError('SERVICE_UNAVAILABLE', 'Signing is busy; retry shortly. Nothing was charged.', {
        details: { retryAfterSeconds: 2, reason },
      }),
  });

  /** The TSA to ask, or none; a 422 when a time-stamp is asked for and none may be reached. */
  function tsaOf(options: SignatureOptions, loc: (string | number)[]): URL | null {
    if (!options.timestamp) {
      if (options.tsaUrl)
        refuse([...loc, 'tsa_url'], 'tsa_url is used only with timestamp: true', 'tsa_without_timestamp');
      return null;
    }
    const url = options.tsaUrl ?? deps.tsaUrl;
    if (!url)
      refuse(
        [...loc, 'timestamp'],
        'timestamp: true needs a time-stamp authority: give tsa_url, or set PRESSROOM_TSA_URL on the service',
        'tsa_not_configured',
      );
    return checkTsaUrl(url, deps, [...loc, options.tsaUrl ? 'tsa_url' : 'timestamp']);
  }

  return {
    async prepare(options, context, pages) {
      tsaOf(options, context.loc);
      if (options.visible && pages !== undefined && options.visible.page > pages) {
        refuse(
          [...context.loc, 'visible', 'page'],
          `The document has ${pages} pages; there is no page ${options.visible.page}`,
          'page_out_of_range',
        );
      }
      await deps.certificates.check(context.accountId, options.certificate, [...context.loc, 'certificate']);
    },

    async sign(bytes, options, context) {
      const tsa = tsaOf(options, context.loc);
      const { p12, password } = await deps.certificates.open(context.accountId, options.certificate, [
        ...context.loc,
        'certificate',
      ]);
      return slots.run(
        { accountId: context.accountId, kind: context.kind },
        () => {
          // Copies the thread owns (transferred): the caller keeps its PDF.
          const task = {
            pdf: new Uint8Array(bytes).buffer as ArrayBuffer,
            p12: new Uint8Array(p12).buffer as ArrayBuffer,
            password,
            reason: options.reason ?? null,
            location: options.location ?? null,
            contactInfo: options.contactInfo ?? null,
            timestamp: tsa !== null,
            visible: options.visible ?? null,
          };
          return threads.sign(task, { loc: context.loc, tsa: tsa ? guardedTimestampAuthority(tsa, deps) : null });
        },
        { maxWaitMs: deps.maxWaitMs },
      );
    },

    verify(pdf, accountId) {
      return slots.run({ accountId, kind: 'free' }, () => verifySignatures(pdf), { maxWaitMs: deps.maxWaitMs });
    },

    stats: () => slots.stats(),
    close: () => threads.close(),
  };
}
