/**
 * Signs a PDF with a stored certificate (PAdES through @libpdf/core): B-B, or B-T with a time-stamp
 * from an RFC 3161 authority (tsa.ts). The signature is an incremental update, so the bytes before it
 * — a PDF/A file's included — are kept exactly; it is the document's last change. An optional visible
 * mark (a framed note with the signer, the time and the reason) is drawn into the named page's content
 * in the same update (signing-worker.ts), so the signature covers it too; libpdf 0.4 gives the
 * signature field itself an invisible widget.
 *
 * Signing is checked before any charge (`prepare`: the certificate exists, is valid and costs what a
 * certificate may to open, a time-stamp authority is configured and allowed, the visible page exists
 * when the page count is known), and runs in a slot of the signing pool (signing-pool.ts), on a thread
 * of that slot, under a deadline. The same pool runs verifications (verify.ts) and certificate
 * uploads' checks, as free work.
 */
import type { Dispatcher } from 'undici';
import type { PoolStats, TaskKind } from '../scheduling/fair-scheduler.js';
import { ValidationError } from '../shared/errors.js';
import type { CertificateService } from './certificates.js';
import type { SigningPool } from './signing-pool.js';
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
  /** The signature report of a PDF (verify.ts), in a free slot of the same pool; `loc` names the input in refusals. */
  verify(pdf: Buffer, accountId: string, loc?: (string | number)[]): Promise<SignatureReport>;
  stats(): PoolStats;
}

export interface SigningDeps {
  certificates: CertificateService;
  /** PRESSROOM_TSA_URL */
  tsaUrl?: string;
  allowPrivateNetworks: boolean;
  /** The guarded dispatcher time-stamp requests go through. */
  dispatcher: Dispatcher;
  /** Slots and threads signatures and checks run in. */
  pool: SigningPool;
}

function refuse(loc: (string | number)[], msg: string, type: string): never {
  throw new ValidationError([{ loc, msg, type }]);
}

export function createSigning(deps: SigningDeps): Signing {
  const { pool } = deps;

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
      // Copies the thread owns (transferred), made once a slot is granted: the caller keeps its PDF.
      const task = () => ({
        pdf: new Uint8Array(bytes).buffer as ArrayBuffer,
        p12: new Uint8Array(p12).buffer as ArrayBuffer,
        password,
        reason: options.reason ?? null,
        location: options.location ?? null,
        contactInfo: options.contactInfo ?? null,
        timestamp: tsa !== null,
        visible: options.visible ?? null,
      });
      return pool.sign({ accountId: context.accountId, kind: context.kind }, task, {
        loc: context.loc,
        tsa: tsa ? guardedTimestampAuthority(tsa, deps) : null,
      });
    },

    verify(pdf, accountId, loc) {
      return pool.run({ accountId, kind: 'free' }, () => verifySignatures(pdf, loc));
    },

    stats: () => pool.stats(),
  };
}
