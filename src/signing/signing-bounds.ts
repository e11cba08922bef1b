/** The signing room's fixed bounds, each with its reason (docs/finishing.md). */

/** Base64 of one PKCS#12 upload: a key, its certificate and a chain of a few CAs fit in a tenth of it. */
export const CERTIFICATE_MAX_BASE64_CHARS = 64 * 1024;

/** Certificates one account may keep: one per signer or department, not a key store. */
export const CERTIFICATES_PER_ACCOUNT = 50;

/** Deadline of one time-stamp request, connection to answer: a TSA slower than this fails the document (TSA_FAILED). */
export const TSA_TIMEOUT_MS = 10_000;

/** Largest time-stamp answer read: a token with its TSA's chain is a few kB. */
export const TSA_MAX_RESPONSE_BYTES = 64 * 1024;

/** Bytes reserved in the PDF for the signature: the CMS with its chain and a time-stamp token with the TSA's own. */
export const SIGNATURE_RESERVED_BYTES = 32 * 1024;

/**
 * Room the CMS needs besides the certificates it carries: the signature (512 bytes for RSA-4096), the
 * signed attributes, and a time-stamp token with its authority's chain (a few kB). The reservation
 * grows past SIGNATURE_RESERVED_BYTES for a certificate and chain that need it (1,500 names made one of
 * 34 KB), so every certificate an upload accepts can sign.
 */
export const SIGNATURE_OVERHEAD_BYTES = 16 * 1024;

/** Deadline of one `pdfsig` run (verify): reading a long document's signatures is quick; a stuck one is stopped. */
export const PDFSIG_TIMEOUT_MS = 30_000;

/** What one `pdfsig` run may allocate: poppler reads the whole file; twice a large document's need. */
export const PDFSIG_MEMORY_CEILING_BYTES = 1024 ** 3;

/**
 * Rounds of password hashing one step of opening a PKCS#12 may ask for (its integrity check, its key,
 * its certificates), and all steps together: .NET's own loader limits (Pkcs12LoaderLimits: 300,000
 * per step, 1,000,000 in all). Exports use 2,048 (OpenSSL), 2,000 (Windows), 10,000 (Java); the cost is
 * declared in the file and read before any hashing, so a 2 KB file cannot ask for minutes of it.
 */
export const PKCS12_MAX_ITERATIONS = 300_000;
export const PKCS12_MAX_TOTAL_ITERATIONS = 1_000_000;

/**
 * Deadline of one task on a signing thread (a signature, or opening an uploaded PKCS#12): a signature
 * of a long document with a time-stamp, its PKCS#12 at the iteration bounds, takes seconds; past this
 * it is stuck or hostile, and its thread is ended (SIGNING_TIMEOUT, refunded).
 */
export const SIGNING_TIMEOUT_MS = 60_000;

/** Slots of the signing pool: one per core, and at least two, so free work (uploads, checks) always leaves one to a paid signature. */
export function signingSlotsFor(cores: number): number {
  return Math.max(2, cores);
}

/** Signatures one check reports: contracts carry a few, approval chains dozens; pdfsig holds each one's contents in memory. */
export const VERIFY_MAX_SIGNATURES = 100;

/** What `pdfsig -dump` may write for one check, all signatures together; each file gets its share (RLIMIT_FSIZE). */
export const VERIFY_DUMP_BUDGET_BYTES = 16 * 1024 * 1024;
