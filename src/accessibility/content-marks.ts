/**
 * Marked content in a page's content stream (ISO 32000-1, 14.6): which painting operators sit outside
 * every marked-content sequence, and wrapping each of them as an `/Artifact` (PDF/UA-1 7.1: content is
 * either tagged or an artifact). Chromium's tagged output leaves page backgrounds, borders, decorative
 * images (`alt=""`) and the header and footer boxes outside its marked content.
 *
 * The scanner reads only token boundaries (PDF 32000-1, 7.2 and 8.9.7 for inline images); it never
 * rebuilds a stream, it inserts `/Artifact BMC` and `EMC` between whole operations, so every byte
 * Chromium wrote stays as it was. An artifact wraps one painting operation (a path from its first
 * construction operator to its painting operator, one text-showing operator, one XObject, shading or
 * inline image): it never crosses a q/Q, BT/ET or marked-content boundary.
 */

/** One operator with where its operands start and where it ends (byte offsets). */
interface Operation {
  op: string;
  start: number;
  end: number;
  /** The first operand when it is a name (`/Artifact` of `BMC` or `BDC`, `/X7` of `Do`). */
  tag?: string;
  /** Whether the operand list holds a dictionary with an MCID (a BDC opening tagged content). */
  mcid?: boolean;
}

const PATH_CONSTRUCTION = new Set(['m', 'l', 'c', 'v', 'y', 'h', 're']);
const PATH_PAINTING = new Set(['S', 's', 'f', 'F', 'f*', 'B', 'B*', 'b', 'b*']);
const SINGLE_PAINTING = new Set(['Tj', 'TJ', "'", '"', 'Do', 'sh', 'BI']);

const isWhite = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09 || b === 0x0c || b === 0x00;
// ( ) < > [ ] { } / %
const isDelimiter = (b: number) =>
  b === 0x28 ||
  b === 0x29 ||
  b === 0x3c ||
  b === 0x3e ||
  b === 0x5b ||
  b === 0x5d ||
  b === 0x7b ||
  b === 0x7d ||
  b === 0x2f ||
  b === 0x25;
// 0-9 + - .
const isNumberStart = (b: number) => (b >= 0x30 && b <= 0x39) || b === 0x2b || b === 0x2d || b === 0x2e;

/** The operations of one content stream, in order; malformed trailing bytes end the scan. */
export function* operations(bytes: Uint8Array): Generator<Operation> {
  // One view for every word and name read (Buffer.from of each slice would copy it).
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let i = 0;
  let operandStart = -1;
  let firstName: string | undefined;
  let mcid = false;
  const n = bytes.length;
  const operand = (at: number) => {
    if (operandStart < 0) operandStart = at;
  };
  while (i < n) {
    const b = bytes[i]!;
    if (isWhite(b)) {
      i++;
    } else if (b === 0x25) {
      while (i < n && bytes[i] !== 0x0a && bytes[i] !== 0x0d) i++;
    } else if (b === 0x28) {
      operand(i);
      let depth = 0;
      for (; i < n; i++) {
        const c = bytes[i]!;
        if (c === 0x5c) i++;
        else if (c === 0x28) depth++;
        else if (c === 0x29 && --depth === 0) break;
      }
      i++;
    } else if (b === 0x3c && bytes[i + 1] === 0x3c) {
      operand(i);
      i += 2;
    } else if (b === 0x3e && bytes[i + 1] === 0x3e) {
      i += 2;
    } else if (b === 0x3c) {
      operand(i);
      while (i < n && bytes[i] !== 0x3e) i++;
      i++;
    } else if (b === 0x5b || b === 0x5d || b === 0x7b || b === 0x7d || b === 0x3e || b === 0x29) {
      operand(i);
      i++;
    } else if (b === 0x2f) {
      const first = operandStart < 0;
      operand(i);
      const from = ++i;
      while (i < n && !isWhite(bytes[i]!) && !isDelimiter(bytes[i]!)) i++;
      const name = text.toString('latin1', from, i);
      if (first) firstName = name;
      if (name === 'MCID') mcid = true;
    } else {
      const from = i;
      while (i < n && !isWhite(bytes[i]!) && !isDelimiter(bytes[i]!)) i++;
      // Most words are numbers: told by their first byte (a digit, sign or point), read no further.
      if (isNumberStart(b)) {
        operand(from);
        continue;
      }
      const word = text.toString('latin1', from, i);
      if (word === 'true' || word === 'false' || word === 'null') {
        operand(from);
        continue;
      }
      const start = operandStart < 0 ? from : operandStart;
      if (word === 'BI') {
        i = skipInlineImage(bytes, i);
        yield { op: 'BI', start, end: i };
      } else {
        yield { op: word, start, end: i, ...(firstName ? { tag: firstName } : {}), ...(mcid ? { mcid } : {}) };
      }
      operandStart = -1;
      firstName = undefined;
      mcid = false;
    }
  }
}

/** From after `BI` to after its `EI`: the image data is binary and may hold anything but a whitespace-framed EI. */
function skipInlineImage(bytes: Uint8Array, from: number): number {
  const n = bytes.length;
  let i = from;
  // The dictionary's keys and values, then ID and one whitespace byte.
  while (
    i < n &&
    !(bytes[i] === 0x49 && bytes[i + 1] === 0x44 && isWhite(bytes[i - 1] ?? 0x20) && isWhite(bytes[i + 2] ?? 0x20))
  )
    i++;
  i += 3;
  while (i < n) {
    if (
      bytes[i] === 0x45 &&
      bytes[i + 1] === 0x49 &&
      isWhite(bytes[i - 1]!) &&
      (i + 2 >= n || isWhite(bytes[i + 2]!) || isDelimiter(bytes[i + 2]!))
    )
      return i + 2;
    i++;
  }
  return n;
}

/** What a walk over a stream found: painting outside marked content, and tagged content inside an artifact. */
export interface MarkSurvey {
  /** Byte ranges of painting operations outside any marked content (what becomes an artifact). */
  unmarked: Array<[number, number]>;
  /** Of `unmarked`, those inside Chromium's header and footer (pagination artifacts). */
  pagination: Set<number>;
  /** Whether the stream sets a clip in a group (Chromium's body does; a drawn watermark does not). */
  clips: boolean;
  /** Tagged (MCID) sequences opened inside an artifact: Matterhorn 01-004. */
  taggedInArtifact: number;
}

/** A q…Q group: whether it has set its clip yet, and whether it draws Chromium's header or footer. */
interface Group {
  clipped: boolean;
  pagination: boolean;
}

/**
 * Chromium draws a page as clipped groups side by side: the body's (the first clipped group), then,
 * with a header or footer, one group for both at the same depth. What that later group paints is
 * pagination; a group nested inside the body (an element's overflow clip) is deeper and stays content.
 */
export function surveyMarks(bytes: Uint8Array): MarkSurvey {
  const unmarked: Array<[number, number]> = [];
  const pagination = new Set<number>();
  const open: boolean[] = []; // per open sequence: is it an artifact
  const groups: Group[] = [{ clipped: false, pagination: false }];
  let bodyDepth = -1;
  let taggedInArtifact = 0;
  let pathStart = -1;
  const paint = (range: [number, number]) => {
    if (groups.at(-1)!.pagination) pagination.add(unmarked.length);
    unmarked.push(range);
  };
  for (const o of operations(bytes)) {
    if (o.op === 'q') {
      groups.push({ clipped: false, pagination: groups.at(-1)!.pagination });
    } else if (o.op === 'Q') {
      if (groups.length > 1) groups.pop();
    } else if ((o.op === 'W' || o.op === 'W*') && !groups.at(-1)!.clipped && groups.length > 1) {
      groups.at(-1)!.clipped = true;
      const depth = groups.length - 1;
      if (bodyDepth < 0) bodyDepth = depth;
      else if (depth === bodyDepth) groups.at(-1)!.pagination = true;
    }
    if (o.op === 'BMC' || o.op === 'BDC') {
      if (o.mcid && open.includes(true)) taggedInArtifact++;
      open.push(o.tag === 'Artifact');
      pathStart = -1;
    } else if (o.op === 'EMC') {
      open.pop();
      pathStart = -1;
    } else if (open.length > 0) {
      continue;
    } else if (PATH_CONSTRUCTION.has(o.op)) {
      if (pathStart < 0) pathStart = o.start;
    } else if (PATH_PAINTING.has(o.op)) {
      paint([pathStart < 0 ? o.start : pathStart, o.end]);
      pathStart = -1;
    } else if (o.op === 'n') {
      pathStart = -1;
    } else if (SINGLE_PAINTING.has(o.op)) {
      paint([o.start, o.end]);
    }
  }
  return { unmarked, pagination, clips: bodyDepth >= 0, taggedInArtifact };
}

/** What the painting of a stream outside marked content is: Chromium's page, or the service's watermark. */
export type StreamRole = 'page' | 'watermark';

const latin1 = (s: string) => Buffer.from(s, 'latin1');
const OPEN = latin1('/Artifact BMC\n');
// PDF 32000-1, 14.8.2.2: header, footer and page numbers, and a watermark, are pagination artifacts.
const OPEN_PAGINATION = latin1('/Artifact <</Type /Pagination>> BDC\n');
const OPEN_WATERMARK = latin1('/Artifact <</Type /Pagination /Subtype /Watermark>> BDC\n');
const CLOSE = latin1('\nEMC\n');

/** The stream with every painting operation outside marked content wrapped as an artifact; null when there was none. */
export function markArtifacts(
  bytes: Uint8Array,
  role: StreamRole = 'page',
  survey: MarkSurvey = surveyMarks(bytes),
): { bytes: Buffer; wrapped: number } | null {
  const { unmarked, pagination } = survey;
  if (unmarked.length === 0) return null;
  const parts: Uint8Array[] = [];
  let at = 0;
  unmarked.forEach(([start, end], i) => {
    const open = role === 'watermark' ? OPEN_WATERMARK : pagination.has(i) ? OPEN_PAGINATION : OPEN;
    parts.push(bytes.subarray(at, start), open, bytes.subarray(start, end), CLOSE);
    at = end;
  });
  parts.push(bytes.subarray(at));
  return { bytes: Buffer.concat(parts), wrapped: unmarked.length };
}
