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

/** Deadline of one `pdfsig` run (verify): reading a long document's signatures is quick; a stuck one is stopped. */
export const PDFSIG_TIMEOUT_MS = 30_000;

/** What one `pdfsig` run may allocate: poppler reads the whole file; twice a large document's need. */
export const PDFSIG_MEMORY_CEILING_BYTES = 1024 ** 3;
