/**
 * The bounds of the JSON parse threads (json-parse-pool.ts), fixed here with their reasons
 * (docs/operations.md "Large request bodies").
 */

/**
 * Bodies larger than this are parsed on a parse thread, smaller ones on the event loop: this much JSON
 * parses in a pause like one ordinary request's, while offloading costs about twice the CPU in all
 * (the thread parses, walks and cuts; the loop joins the pieces). Figures: docs/performance-log.md.
 */
export const JSON_PARSE_THRESHOLD_BYTES = 256 * 1024;

/** Large bodies that may wait for a thread, all accounts together, before new ones get 503: a few per thread. */
export const JSON_PARSE_QUEUE_LIMIT = 16;

/** Large bodies of one account waiting or being parsed at once before its next gets 429: one account cannot fill the line. */
export const JSON_PARSE_ACCOUNT_LIMIT = 4;

/** Parse threads: every core but one, which stays with the event loop; at least one. */
export function jsonParseThreadsFor(cores: number): number {
  return Math.max(1, cores - 1);
}

/**
 * Heap cap of each parse thread: the costliest JSON shapes take ~48 bytes of heap per byte
 * (json-heap-estimate.ts), so 64 × the generation body limit in MiB parses any body the limit lets in;
 * at least 256 MB.
 */
export function jsonParseMemoryMbFor(bodyLimitBytes: number): number {
  return Math.max(256, 64 * Math.ceil(bodyLimitBytes / (1024 * 1024)));
}
