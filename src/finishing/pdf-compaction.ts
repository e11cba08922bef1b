/**
 * Compaction: every PDF leaves the service with its small objects packed into compressed object
 * streams and a compressed cross-reference stream (PDF 1.5, ISO 32000-1 7.5.7 and 7.5.8).
 *
 * Why: a tagged Chromium PDF is mostly its structure tree, tens of thousands of tiny uncompressed
 * dictionaries; packed and deflated they shrink about fivefold, as with `qpdf --object-streams=generate`.
 *
 * Why not qpdf (or pdf-lib): both parse every object and write the file anew, several times this
 * pass's CPU (pdf-lib on the event loop; figures in docs/long-documents.md "Compaction"). This pass parses no object:
 * it reads the cross-reference tables, cuts each object's bytes out where the table says it starts,
 * and copies them, unchanged and under their own numbers, into object streams. So nothing inside the
 * document changes — structure tree, links, outline, fonts and page content are the same bytes — and
 * the cost is a memory copy plus zlib.
 *
 * It handles the shape Pressroom's own files have: classic xref tables (Chromium's, with the Info
 * update of document-info.ts appended as an incremental update, or pdf-lib's after PDF/A or the
 * preview stamp), no encryption. Anything else (an xref stream already, a damaged table) is returned
 * unchanged: compaction is an optimisation, never a reason to fail a document.
 *
 * Stream objects stay where they are as they are (object streams cannot hold streams; Chromium already
 * deflates its content streams and fonts, and re-deflating them at a higher level saved 3.5 % with
 * qpdf's `--recompress-flate --compression-level=9` at 3× the CPU). Objects of a generation other
 * than 0 stay outside too (object streams hold generation 0 only).
 *
 * A long PDF (spooled to a file) is compacted from file to file (`compactPdfFile`): the input is read
 * forwards in windows, the output written as it is made, so the thread holds a window, the largest
 * object and the cross-reference entries, never the document (measured in docs/rendering.md).
 *
 * It is synchronous: the service runs it on a thread of its own (compaction-pool.ts), never on the
 * event loop. Async zlib on the event loop was tried first: setting up ~160 zlib streams for one report
 * held the loop for up to 0.9 s.
 */
import { closeSync, fstatSync, openSync, rmSync, writeSync } from 'node:fs';
import { deflateSync } from 'node:zlib';
import { PDFContext, PDFDict, PDFName, PDFNumber, PDFRef } from '@cantoo/pdf-lib';
import { bufferBytes, fileBytes, lastStartXref, parseAt, type PdfBytes } from '../pdf/pdf-xref.js';

/** Objects per object stream (qpdf uses 100): 200 packed the report 3 % smaller at less CPU; a reader inflates a whole stream to reach one object. */
const OBJECTS_PER_STREAM = 200;
/** zlib's default level: level 1 saved ~15 % of the CPU but left the report 5 % larger. */
const ZLIB_LEVEL = 6;
const deflate = (data: Buffer) => deflateSync(data, { level: ZLIB_LEVEL });
/** How much of a spooled file is read at a time: objects are read in file order, one read per window. */
const READ_WINDOW_BYTES = 1 << 20;
/** The trailer dictionary is looked for within this much after its xref section's entries. */
const TRAILER_WINDOW_BYTES = 64 * 1024;

/** The outcome: the compacted file, or the input unchanged with the reason. */
export type Compaction =
  | { compacted: true; pdf: Buffer; bytesBefore: number; bytesAfter: number }
  | { compacted: false; pdf: Buffer; bytesBefore: number; bytesAfter: number; reason: string };

/** The outcome for a file: written to the output path, or not (no output file left) with the reason. */
export type FileCompactionOutcome =
  | { compacted: true; bytesBefore: number; bytesAfter: number }
  | { compacted: false; bytesBefore: number; bytesAfter: number; reason: string };

/** One in-use object as the newest cross-reference section lists it. */
interface Located {
  number: number;
  generation: number;
  offset: number;
}

/** Object numbers a file may use: a long document has ~1,000 objects per tagged page; this bounds the tables below. */
const MAX_OBJECT_NUMBER = 1 << 24;

/**
 * The newest xref entry of each object number, in typed arrays (~11 bytes per object; a JS object
 * per entry took ~100 MB for the 330-page report's 316,000).
 */
class ObjectTable {
  /** 0: not listed yet; 1: in use; 2: free. */
  #state = new Uint8Array(1024);
  #offset = new Float64Array(1024);
  #generation = new Uint16Array(1024);

  /** Records the entry unless a newer section already listed the number. */
  listNewest(number: number, inUse: boolean, offset: number, generation: number): void {
    if (number >= MAX_OBJECT_NUMBER) throw new NotCompactable('object number out of range');
    if (number >= this.#state.length) this.#grow(number + 1);
    if (this.#state[number] !== 0) return;
    this.#state[number] = inUse ? 1 : 2;
    this.#offset[number] = offset;
    this.#generation[number] = generation;
  }

  /** The in-use objects' numbers (object 0 excluded), in the order of their offsets. */
  liveByOffset(): Uint32Array {
    const numbers: number[] = [];
    for (let n = 1; n < this.#state.length; n++) if (this.#state[n] === 1) numbers.push(n);
    const offsets = this.#offset;
    return Uint32Array.from(numbers).sort((a, b) => offsets[a]! - offsets[b]!);
  }

  located(number: number): Located {
    return { number, generation: this.#generation[number]!, offset: this.#offset[number]! };
  }

  #grow(atLeast: number): void {
    const capacity = Math.max(atLeast, this.#state.length * 2);
    const grow = <T extends Uint8Array | Float64Array | Uint16Array>(old: T, made: T): T => {
      made.set(old as never);
      return made;
    };
    this.#state = grow(this.#state, new Uint8Array(capacity));
    this.#offset = grow(this.#offset, new Float64Array(capacity));
    this.#generation = grow(this.#generation, new Uint16Array(capacity));
  }
}

/** What the cross-reference chain says: the live objects, every offset any section names, the trailer. */
interface XrefChain {
  objects: ObjectTable;
  /** The live objects' numbers in the order of their offsets: the file is read forwards. */
  live: Uint32Array;
  /** Every object offset and section offset in the file, sorted: an object's bytes end before the next one. */
  boundaries: Float64Array;
  trailer: PDFDict;
  size: number;
}

class NotCompactable extends Error {}

/** Where the compacted file goes: kept in memory, or written to a file as it is made. */
interface Sink {
  readonly written: number;
  write(chunk: Buffer): void;
}

class MemorySink implements Sink {
  readonly parts: Buffer[] = [];
  written = 0;
  write(chunk: Buffer): void {
    this.parts.push(chunk);
    this.written += chunk.length;
  }
}

class FileSink implements Sink {
  written = 0;
  constructor(private readonly fd: number) {}
  write(chunk: Buffer): void {
    // writeSync may write part of a chunk (a filling disk); the rest follows or the next call throws.
    for (let done = 0; done < chunk.length; )
      done += writeSync(this.fd, chunk, done, chunk.length - done, this.written + done);
    this.written += chunk.length;
  }
}

/**
 * Packs `pdf`'s objects into object streams. Never throws for a file it cannot handle: it gives the
 * input back (`compacted: false`). `pdf/a-1b` files must not be passed (PDF/A-1 is PDF 1.4, which has
 * no object streams); the caller skips them.
 */
export function compactPdf(pdf: Buffer): Compaction {
  const sink = new MemorySink();
  const reason = compactInto(bufferBytes(pdf), sink);
  if (reason !== undefined) return { compacted: false, pdf, bytesBefore: pdf.length, bytesAfter: pdf.length, reason };
  const out = Buffer.concat(sink.parts, sink.written);
  return { compacted: true, pdf: out, bytesBefore: pdf.length, bytesAfter: out.length };
}

/**
 * `compactPdf` from file to file: the PDF at `inputPath` compacted into a new file at `outputPath`
 * (created, never overwritten), the same bytes `compactPdf` makes. When it is not compacted, or
 * anything throws (a read or write error), no output file is left. `readWindowBytes`: tests make it
 * small, so that objects straddle windows and some are larger than one.
 */
export function compactPdfFile(
  inputPath: string,
  outputPath: string,
  readWindowBytes = READ_WINDOW_BYTES,
): FileCompactionOutcome {
  const input = openSync(inputPath, 'r');
  try {
    const size = fstatSync(input).size;
    const output = openSync(outputPath, 'wx', 0o600);
    let kept = false;
    try {
      const sink = new FileSink(output);
      const reason = compactInto(fileBytes(input, size, readWindowBytes), sink);
      if (reason !== undefined) return { compacted: false, bytesBefore: size, bytesAfter: size, reason };
      kept = true;
      return { compacted: true, bytesBefore: size, bytesAfter: sink.written };
    } finally {
      closeSync(output);
      if (!kept) rmSync(outputPath, { force: true });
    }
  } finally {
    closeSync(input);
  }
}

/** Writes the compacted file into `sink`; or says why not (then what the sink holds is to be dropped). */
function compactInto(pdf: PdfBytes, sink: Sink): string | undefined {
  try {
    writeCompacted(pdf, readXrefChain(pdf), sink);
  } catch (error) {
    if (error instanceof NotCompactable) return error.message;
    throw error;
  }
  // Object streams cost a little per stream: a file that had few small objects can grow.
  return sink.written >= pdf.length ? 'no smaller' : undefined;
}

const XREF_SUBSECTION = /^[ \t\r\n]*(\d+)[ \t]+(\d+)[ \t]*(?:\r\n|\r|\n)/;

/** Reads every classic xref section from the last `startxref` back along `/Prev`; the newest entry of each object wins. */
function readXrefChain(pdf: PdfBytes): XrefChain {
  const context = PDFContext.create();
  const objects = new ObjectTable();
  const boundaries: number[] = [];
  let newest: PDFDict | undefined;
  let size = 0;
  let at = lastStartXref(pdf);
  const visited = new Set<number>();
  while (at !== undefined) {
    if (visited.has(at) || visited.size > 64) throw new NotCompactable('xref chain loops');
    visited.add(at);
    if (pdf.slice(at, at + 4).toString('latin1') !== 'xref') throw new NotCompactable('not a classic xref table');
    boundaries.push(at);
    let cursor = at + 4;
    for (;;) {
      const head = pdf.slice(cursor, cursor + 64).toString('latin1');
      if (/^\s*trailer/.test(head)) break;
      const sub = XREF_SUBSECTION.exec(head);
      if (!sub) throw new NotCompactable('unreadable xref subsection');
      const first = Number(sub[1]);
      const count = Number(sub[2]);
      cursor += sub[0].length;
      if (cursor + count * 20 > pdf.length) throw new NotCompactable('xref runs past the end');
      const table = pdf.slice(cursor, cursor + count * 20);
      for (let i = 0; i < count; i++) {
        const entry = i * 20;
        const offset = digits(table, entry, 10);
        const generation = digits(table, entry + 11, 5);
        const kind = table[entry + 17];
        if (kind === N) {
          if (!(offset > 0 && offset < pdf.length)) throw new NotCompactable('xref offset outside the file');
          boundaries.push(offset);
          objects.listNewest(first + i, true, offset, generation);
        } else if (kind === F) {
          objects.listNewest(first + i, false, 0, generation);
        } else {
          throw new NotCompactable('unreadable xref entry');
        }
      }
      cursor += count * 20;
    }
    const tail = pdf.slice(cursor, cursor + TRAILER_WINDOW_BYTES);
    const trailerAt = tail.indexOf('trailer', 0, 'latin1');
    const trailer = trailerAt < 0 ? undefined : parseAt(tail, trailerAt + 'trailer'.length, context);
    if (!(trailer instanceof PDFDict)) throw new NotCompactable('unreadable trailer');
    if (trailer.has(PDFName.of('Encrypt'))) throw new NotCompactable('encrypted');
    if (trailer.has(PDFName.of('XRefStm'))) throw new NotCompactable('hybrid xref');
    newest ??= trailer;
    size = Math.max(size, trailer.lookupMaybe(PDFName.of('Size'), PDFNumber)?.asNumber() ?? 0);
    const prev = trailer.lookupMaybe(PDFName.of('Prev'), PDFNumber)?.asNumber();
    at = prev === undefined ? undefined : prev;
  }
  if (!newest || !(newest.get(PDFName.of('Root')) instanceof PDFRef))
    throw new NotCompactable('no trailer with a Root');
  boundaries.push(pdf.length);
  const live = objects.liveByOffset();
  size = Math.max(size, live.reduce((max, n) => Math.max(max, n), 0) + 1);
  return { objects, live, boundaries: Float64Array.from(boundaries).sort(), trailer: newest, size };
}

const N = 0x6e; // 'n'
const F = 0x66; // 'f'

/** The decimal number in `width` bytes at `at`: an xref entry's fields are zero-padded digits. */
function digits(bytes: Buffer, at: number, width: number): number {
  let value = 0;
  for (let i = at; i < at + width; i++) {
    const digit = bytes[i]! - 0x30;
    if (!(digit >= 0 && digit <= 9)) throw new NotCompactable('unreadable xref entry');
    value = value * 10 + digit;
  }
  return value;
}

/** The first boundary after `offset` (binary search in the sorted list). */
function nextBoundary(boundaries: Float64Array, offset: number): number {
  let lo = 0;
  let hi = boundaries.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (boundaries[mid]! > offset) hi = mid;
    else lo = mid + 1;
  }
  return boundaries[lo]!;
}

const OBJECT_HEADER = /^(\d+)[ \t\r\n]+(\d+)[ \t\r\n]+obj/;
const isWhite = (byte: number) =>
  byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09 || byte === 0x0c || byte === 0x00;

/** The pieces of one object: its bytes up to its end (a view while it fits the read window), where its body starts and ends (in `bytes`), whether it is a stream. */
function cutObject(
  pdf: PdfBytes,
  object: Located,
  end: number,
): { bytes: Buffer; bodyStart: number; bodyEnd: number; objectEnd: number; stream: boolean } {
  const bytes = pdf.slice(object.offset, end);
  const header = OBJECT_HEADER.exec(bytes.toString('latin1', 0, 40));
  if (!header || Number(header[1]) !== object.number || Number(header[2]) !== object.generation) {
    throw new NotCompactable(`object ${object.number} is not where the xref says`);
  }
  const bodyStart = header[0].length;
  const endobj = bytes.lastIndexOf('endobj', undefined, 'latin1');
  if (endobj < bodyStart) throw new NotCompactable(`object ${object.number} has no endobj`);
  let bodyEnd = endobj;
  while (bodyEnd > bodyStart && isWhite(bytes[bodyEnd - 1]!)) bodyEnd -= 1;
  const stream = bodyEnd - bodyStart >= 9 && bytes.toString('latin1', bodyEnd - 9, bodyEnd) === 'endstream';
  return { bytes, bodyStart, bodyEnd, objectEnd: endobj + 'endobj'.length, stream };
}

/** xref stream entry widths: type 1 byte, offset or object-stream number 4 bytes, generation or index 2 bytes. */
const W = [1, 4, 2] as const;

/** The xref stream's rows by object number, in typed arrays (a long document has ~10 objects per page). */
class XrefEntries {
  readonly #type: Uint8Array;
  readonly #field2: Uint32Array;
  readonly #field3: Uint16Array;
  constructor(readonly capacity: number) {
    this.#type = new Uint8Array(capacity);
    this.#field2 = new Uint32Array(capacity);
    this.#field3 = new Uint16Array(capacity);
    // Object 0 heads the free list: type 0, generation 65535.
    this.#field3[0] = 65535;
  }
  set(number: number, type: 1 | 2, field2: number, field3: number): void {
    this.#type[number] = type;
    this.#field2[number] = field2;
    this.#field3[number] = field3;
  }
  /** The rows of objects 0 … size − 1 (numbers never set are free: type 0). */
  rows(size: number): Buffer {
    const rows = Buffer.alloc(size * (W[0] + W[1] + W[2]));
    for (let n = 0; n < size; n++) {
      const at = n * 7;
      rows.writeUInt8(this.#type[n]!, at);
      rows.writeUInt32BE(this.#field2[n]!, at + 1);
      rows.writeUInt16BE(this.#field3[n]!, at + 5);
    }
    return rows;
  }
}

function writeCompacted(pdf: PdfBytes, chain: XrefChain, sink: Sink): void {
  const { objects, live, boundaries, trailer } = chain;
  if (pdf.length >= 2 ** 32) throw new NotCompactable('too large for 4-byte offsets');
  const firstObject = live.length > 0 ? objects.located(live[0]!).offset : pdf.length;
  const header = Buffer.from(pdf.slice(0, firstObject));
  // Object streams need PDF 1.5: lift an older version in place (same length, nothing moves).
  const version = /^%PDF-1\.([0-4])/.exec(header.toString('latin1', 0, 8));
  if (version) header.write('5', 7, 'latin1');
  sink.write(header);

  let nextNumber = chain.size;
  // Every live object, one object stream per OBJECTS_PER_STREAM of them at most, and the xref stream.
  const entries = new XrefEntries(chain.size + Math.ceil(live.length / OBJECTS_PER_STREAM) + 1);
  let pending: { number: number; body: Buffer }[] = [];

  // Each object stream is written as soon as it is full: only its objects are held meanwhile.
  const flush = () => {
    if (pending.length === 0) return;
    const streamNumber = nextNumber++;
    let offset = 0;
    const index: string[] = [];
    pending.forEach((o, i) => {
      index.push(`${o.number} ${offset}`);
      entries.set(o.number, 2, streamNumber, i);
      offset += o.body.length + 1;
    });
    const head = Buffer.from(`${index.join(' ')}\n`, 'latin1');
    const data = deflate(Buffer.concat([head, ...pending.flatMap((o) => [o.body, NEWLINE])]));
    entries.set(streamNumber, 1, sink.written, 0);
    sink.write(
      Buffer.from(
        `${streamNumber} 0 obj\n<</Type /ObjStm /N ${pending.length} /First ${head.length} /Filter /FlateDecode /Length ${data.length}>>\nstream\n`,
        'latin1',
      ),
    );
    sink.write(data);
    sink.write(ENDSTREAM);
    pending = [];
  };

  for (const number of live) {
    const object = objects.located(number);
    const cut = cutObject(pdf, object, nextBoundary(boundaries, object.offset));
    if (cut.stream || object.generation !== 0) {
      entries.set(object.number, 1, sink.written, object.generation);
      sink.write(cut.bytes.subarray(0, cut.objectEnd));
      sink.write(NEWLINE);
      continue;
    }
    // A copy: a file's bytes are read into one window, reused by the next read.
    pending.push({ number: object.number, body: Buffer.from(cut.bytes.subarray(cut.bodyStart, cut.bodyEnd)) });
    if (pending.length === OBJECTS_PER_STREAM) flush();
  }
  flush();

  const xrefNumber = nextNumber++;
  const size = nextNumber;
  entries.set(xrefNumber, 1, sink.written, 0);
  const xrefData = deflate(entries.rows(size));
  const keep = ['Root', 'Info', 'ID']
    .map((key) => [key, trailer.get(PDFName.of(key))] as const)
    .filter(([, value]) => value !== undefined);
  const kept = keep.map(([key, value]) => `/${key} ${value!.toString()}`).join(' ');
  const xrefAt = sink.written;
  sink.write(
    Buffer.from(
      `${xrefNumber} 0 obj\n<</Type /XRef /Size ${size} /W [${W.join(' ')}] ${kept} /Filter /FlateDecode /Length ${xrefData.length}>>\nstream\n`,
      'latin1',
    ),
  );
  sink.write(xrefData);
  sink.write(ENDSTREAM);
  sink.write(Buffer.from(`startxref\n${xrefAt}\n%%EOF\n`, 'latin1'));
}

const NEWLINE = Buffer.from('\n', 'latin1');
const ENDSTREAM = Buffer.from('\nendstream\nendobj\n', 'latin1');
