/**
 * A large JSON text cut into small JSON texts, and put together again from them a few at a time.
 *
 * Why: a parse worker can parse a large body, but handing the parsed value back to the event loop
 * costs about as much as parsing it there (structured clone deserializes the whole object graph in one
 * block; measured at the same order as JSON.parse itself, see docs/operations.md). Strings cross
 * cheaply. So the worker, once the whole text has parsed and passed the safety walk, cuts the text
 * into pieces of at most PIECE_CHARS characters each, and the event loop parses them one at a time,
 * yielding to other requests between them: the same total work as one JSON.parse, in slices of
 * about a millisecond instead of one block of a second.
 *
 * A piece is either one JSON text (a whole value), or a container built from runs: a run is either a
 * JSON text holding consecutive members (`[a,b]` of an array, `{"k":v}` of an object), or one member
 * too large for a run, cut further. The texts are slices of the original, so the value put together is
 * the one JSON.parse gives for the whole text: same numbers, same key order, last duplicate key wins.
 */
import { BACKSLASH, CLOSE_ARRAY, CLOSE_OBJECT, COLON, COMMA, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from './json-syntax.js';

/** Largest JSON text of one run (characters); a member larger than this is cut further. */
export const PIECE_CHARS = 16 * 1024;

export type JsonPiece =
  | { readonly text: string }
  | { readonly array: readonly JsonRun[] }
  | { readonly object: readonly JsonRun[] };

export type JsonRun = { readonly text: string } | { readonly key?: string; readonly piece: JsonPiece };

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function trimStart(text: string, start: number, end: number): number {
  while (start < end && isSpace(text.charCodeAt(start))) start++;
  return start;
}

function trimEnd(text: string, start: number, end: number): number {
  while (end > start && isSpace(text.charCodeAt(end - 1))) end--;
  return end;
}

/** The index just past the string literal that opens at `start`. */
function endOfString(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i + 1;
  }
  return text.length;
}

/**
 * Calls `member(start, end)` for each direct member of the container spanning [start, end) — valid
 * JSON, trimmed — with the span between its separators (whitespace included, commas not).
 */
function forEachMember(text: string, start: number, end: number, member: (start: number, end: number) => void): void {
  const last = end - 1; // the closing bracket
  if (trimStart(text, start + 1, last) === last) return; // empty
  let depth = 0;
  let from = start + 1;
  for (let i = start + 1; i < last; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) i = endOfString(text, i) - 1;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) depth++;
    else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
    else if (c === COMMA && depth === 0) {
      member(from, i);
      from = i + 1;
    }
  }
  member(from, last);
}

/** An object member `"key": value` too large for a run: its key, and its value cut further. */
function largeObjectMember(text: string, start: number, end: number, limit: number): JsonRun {
  const keyStart = trimStart(text, start, end);
  const keyEnd = endOfString(text, keyStart);
  const key = JSON.parse(text.slice(keyStart, keyEnd)) as string;
  let colon = keyEnd;
  while (colon < end && text.charCodeAt(colon) !== COLON) colon++;
  return { key, piece: cutSpan(text, trimStart(text, colon + 1, end), trimEnd(text, colon + 1, end), limit) };
}

function cutSpan(text: string, start: number, end: number, limit: number): JsonPiece {
  const open = text.charCodeAt(start);
  // Short enough, or a scalar (a long string or number cannot be cut): one text.
  if (end - start <= limit || (open !== OPEN_ARRAY && open !== OPEN_OBJECT)) return { text: text.slice(start, end) };
  const isArray = open === OPEN_ARRAY;
  const [before, after] = isArray ? ['[', ']'] : ['{', '}'];
  const runs: JsonRun[] = [];
  let runStart = -1;
  let runEnd = -1;
  const flush = (): void => {
    if (runStart < 0) return;
    runs.push({ text: `${before}${text.slice(runStart, runEnd)}${after}` });
    runStart = -1;
  };
  forEachMember(text, start, end, (memberStart, memberEnd) => {
    if (memberEnd - memberStart > limit) {
      flush();
      if (isArray)
        runs.push({
          piece: cutSpan(text, trimStart(text, memberStart, memberEnd), trimEnd(text, memberStart, memberEnd), limit),
        });
      else runs.push(largeObjectMember(text, memberStart, memberEnd, limit));
      return;
    }
    if (runStart >= 0 && memberEnd - runStart + 2 > limit) flush();
    if (runStart < 0) runStart = memberStart;
    runEnd = memberEnd;
  });
  flush();
  const only = runs[0];
  if (runs.length === 0) return { text: `${before}${after}` };
  if (runs.length === 1 && only && 'text' in only) return only;
  return isArray ? { array: runs } : { object: runs };
}

/**
 * Cuts a JSON text into pieces of at most `limit` characters where its structure allows. The text must
 * be valid JSON (the worker has parsed it first): the cutting only follows strings and brackets.
 */
export function cutJson(text: string, limit = PIECE_CHARS): JsonPiece {
  const start = trimStart(text, 0, text.length);
  return cutSpan(text, start, trimEnd(text, start, text.length), limit);
}

function define(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/**
 * Puts a cut text together, parsing its pieces in order and awaiting `pause()` whenever the next piece
 * would take the characters parsed since the last pause past `sliceChars` (the event loop passes
 * setImmediate, so other requests run between slices).
 */
export async function joinJson(
  piece: JsonPiece,
  pause: () => Promise<void>,
  sliceChars = PIECE_CHARS,
): Promise<unknown> {
  let sincePause = 0;
  const parse = async (text: string): Promise<unknown> => {
    if (sincePause > 0 && sincePause + text.length > sliceChars) {
      await pause();
      sincePause = 0;
    }
    sincePause += text.length;
    return JSON.parse(text);
  };
  const join = async (p: JsonPiece): Promise<unknown> => {
    if ('text' in p) return parse(p.text);
    if ('array' in p) {
      const out: unknown[] = [];
      for (const run of p.array) {
        if ('text' in run) for (const item of (await parse(run.text)) as unknown[]) out.push(item);
        else out.push(await join(run.piece));
      }
      return out;
    }
    const out: Record<string, unknown> = {};
    for (const run of p.object) {
      if ('text' in run) {
        const members = (await parse(run.text)) as Record<string, unknown>;
        for (const key of Object.keys(members)) define(out, key, members[key]);
      } else {
        define(out, run.key ?? '', await join(run.piece));
      }
    }
    return out;
  };
  return join(piece);
}
