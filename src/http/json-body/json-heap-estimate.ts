/**
 * An upper bound of the heap a parse thread needs for one JSON body (json-parse-worker.ts: decode,
 * JSON.parse, the safety walk, cutting into pieces), read off its bytes in one pass without parsing.
 *
 * Why: a thread's heap cap (V8 resource limits) is a backstop, not a refusal one can rely on. When a
 * parse meets the cap while V8 is compiling a function (lazily, or again after its bytecode was
 * flushed), V8 ends the whole process, not the thread: once seen in CI, with a 64 MB thread given 12 MB
 * of empty arrays. A body whose estimate is past the cap is refused before anything is parsed, so the
 * cap is reached only if the estimate is wrong.
 *
 * The costs are rounded up from V8's (Node 20, x64) as measured with real parse threads, by the least
 * heap cap each of 19 shapes of body parses under (docs/operations.md "Large request bodies"): an
 * object and an array each cost a header and a backing store that grows by halves, a member its slot
 * and its share of that growth, a string its header, and each byte of text up to four bytes (the
 * decoded text and the parsed strings, two-byte when they hold a character past Latin-1). Bodies of
 * typical data are overestimated 2–3×, the worst shapes ~1.5×; with the default cap (64 MB per MiB
 * of body limit) no body within the limit is refused by it.
 */
import { BACKSLASH, COLON, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from './json-syntax.js';

/** Bytes of heap per token; see the header. */
const COST = {
  textByte: 4,
  object: 112,
  array: 96,
  member: 32,
  string: 32,
} as const;

/** Heap bytes `bytes` (a JSON text as UTF-8) needs at most to be parsed, walked and cut. */
export function jsonParseHeapEstimate(bytes: Uint8Array): number {
  let objects = 0;
  let arrays = 0;
  let members = 0;
  let strings = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === QUOTE) {
      inString = true;
      strings++;
    } else if (c === COMMA || c === COLON) members++;
    else if (c === OPEN_OBJECT) objects++;
    else if (c === OPEN_ARRAY) arrays++;
  }
  return (
    bytes.length * COST.textByte +
    objects * COST.object +
    arrays * COST.array +
    members * COST.member +
    strings * COST.string
  );
}
