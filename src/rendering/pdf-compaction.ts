/**
 * Compaction: every PDF leaves the service with its small objects packed into compressed object
 * streams and a compressed cross-reference stream (PDF 1.5, ISO 32000-1 7.5.7 and 7.5.8).
 *
 * Why: a tagged Chromium PDF is mostly its structure tree, tens of thousands of tiny uncompressed
 * dictionaries (the 33-page report: 31,800 objects, 5.6 MB, of which the 43 streams are ~0.5 MB).
 * Packed and deflated they shrink ~5× (5.6 MB → 1.1 MB), the same as `qpdf --object-streams=generate`.
 *
 * Why not qpdf (or pdf-lib): both parse every object and write the file anew. qpdf took 2.6–2.8 s of
 * CPU on the report (a plain `qpdf in out` as much as with object streams: the cost is parsing and
 * writing 31,800 objects, not compressing), pdf-lib ~2 s on the event loop. This pass parses no object:
 * it reads the cross-reference tables, cuts each object's bytes out where the table says it starts,
 * and copies them, unchanged and under their own numbers, into object streams. So nothing inside the
 * document changes — structure tree, links, outline, fonts and page content are the same bytes — and
 * the cost is a memory copy plus zlib (numbers in docs/rendering.md "Compaction").
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
 * It is synchronous: the service runs it on a thread of its own (compaction-pool.ts), never on the
 * event loop. Async zlib on the event loop was tried first: setting up ~160 zlib streams for one report
 * held the loop for up to 0.9 s.
 */
import { deflateSync } from 'node:zlib';
import { PDFContext, PDFDict, PDFName, PDFNumber, PDFRef } from '@cantoo/pdf-lib';
import { bufferBytes, lastStartXref, parseAt } from './pdf-xref.js';

/** Objects per object stream (qpdf uses 100): 200 packed the report 3 % smaller at less CPU; a reader inflates a whole stream to reach one object. */
const OBJECTS_PER_STREAM = 200;
/** zlib's default level: level 1 saved ~15 % of the CPU but left the report 5 % larger. */
const ZLIB_LEVEL = 6;
const deflate = (data: Buffer) => deflateSync(data, { level: ZLIB_LEVEL });

/** The outcome: the compacted file, or the input unchanged with the reason. */
export type Compaction =
  | { compacted: true; pdf: Buffer; bytesBefore: number; bytesAfter: number }
  | { compacted: false; pdf: Buffer; bytesBefore: number; bytesAfter: number; reason: string };

/** One in-use object as the newest cross-reference section lists it. */
interface Located {
  number: number;
  generation: number;
  offset: number;
}

/** What the cross-reference chain says: the live objects, every offset any section names, the trailer. */
interface XrefChain {
  live: Located[];
  /** Every object offset and section offset in the file: an object's bytes end before the next one. */
  boundaries: number[];
  trailer: PDFDict;
  size: number;
}

class NotCompactable extends Error {}

/**
 * Packs `pdf`'s objects into object streams. Never throws for a file it cannot handle: it gives the
 * input back (`compacted: false`). `pdf/a-1b` files must not be passed (PDF/A-1 is PDF 1.4, which has
 * no object streams); the caller skips them.
 */
export function compactPdf(pdf: Buffer): Compaction {
  const unchanged = (reason: string): Compaction => ({ compacted: false, pdf, bytesBefore: pdf.length, bytesAfter: pdf.length, reason });
  let chain: XrefChain;
  try {
    chain = readXrefChain(pdf);
  } catch (error) {
    if (error instanceof NotCompactable) return unchanged(error.message);
    throw error;
  }
  let out: Buffer;
  try {
    out = writeCompacted(pdf, chain);
  } catch (error) {
    if (error instanceof NotCompactable) return unchanged(error.message);
    throw error;
  }
  // Object streams cost a little per stream: a file that had few small objects can grow.
  if (out.length >= pdf.length) return unchanged('no smaller');
  return { compacted: true, pdf: out, bytesBefore: pdf.length, bytesAfter: out.length };
}

const XREF_SUBSECTION = /^[ \t\r\n]*(\d+)[ \t]+(\d+)[ \t]*(?:\r\n|\r|\n)/;

/** Reads every classic xref section from the last `startxref` back along `/Prev`; the newest entry of each object wins. */
function readXrefChain(pdf: Buffer): XrefChain {
  const context = PDFContext.create();
  const seen = new Map<number, Located | null>();
  const boundaries: number[] = [];
  let newest: PDFDict | undefined;
  let size = 0;
  let at = lastStartXref(bufferBytes(pdf));
  const visited = new Set<number>();
  while (at !== undefined) {
    if (visited.has(at) || visited.size > 64) throw new NotCompactable('xref chain loops');
    visited.add(at);
    if (pdf.toString('latin1', at, at + 4) !== 'xref') throw new NotCompactable('not a classic xref table');
    boundaries.push(at);
    let cursor = at + 4;
    for (;;) {
      const head = pdf.toString('latin1', cursor, Math.min(cursor + 64, pdf.length));
      if (/^\s*trailer/.test(head)) break;
      const sub = XREF_SUBSECTION.exec(head);
      if (!sub) throw new NotCompactable('unreadable xref subsection');
      const first = Number(sub[1]);
      const count = Number(sub[2]);
      cursor += sub[0].length;
      if (cursor + count * 20 > pdf.length) throw new NotCompactable('xref runs past the end');
      for (let i = 0; i < count; i++, cursor += 20) {
        const entry = pdf.toString('latin1', cursor, cursor + 18);
        const offset = Number(entry.slice(0, 10));
        const generation = Number(entry.slice(11, 16));
        const kind = entry.charAt(17);
        const number = first + i;
        if (kind === 'n') {
          if (!(offset > 0 && offset < pdf.length)) throw new NotCompactable('xref offset outside the file');
          boundaries.push(offset);
          if (!seen.has(number)) seen.set(number, { number, generation, offset });
        } else if (kind === 'f') {
          if (!seen.has(number)) seen.set(number, null);
        } else {
          throw new NotCompactable('unreadable xref entry');
        }
      }
    }
    const trailerAt = pdf.indexOf('trailer', cursor, 'latin1');
    const trailer = trailerAt < 0 ? undefined : parseAt(pdf, trailerAt + 'trailer'.length, context);
    if (!(trailer instanceof PDFDict)) throw new NotCompactable('unreadable trailer');
    if (trailer.has(PDFName.of('Encrypt'))) throw new NotCompactable('encrypted');
    if (trailer.has(PDFName.of('XRefStm'))) throw new NotCompactable('hybrid xref');
    newest ??= trailer;
    size = Math.max(size, trailer.lookupMaybe(PDFName.of('Size'), PDFNumber)?.asNumber() ?? 0);
    const prev = trailer.lookupMaybe(PDFName.of('Prev'), PDFNumber)?.asNumber();
    at = prev === undefined ? undefined : prev;
  }
  if (!newest || !(newest.get(PDFName.of('Root')) instanceof PDFRef)) throw new NotCompactable('no trailer with a Root');
  boundaries.push(pdf.length);
  boundaries.sort((a, b) => a - b);
  const live = [...seen.values()].filter((o): o is Located => o !== null && o.number > 0).sort((a, b) => a.number - b.number);
  size = Math.max(size, (live.at(-1)?.number ?? 0) + 1);
  return { live, boundaries, trailer: newest, size };
}

/** The first boundary after `offset` (binary search in the sorted list). */
function nextBoundary(boundaries: number[], offset: number): number {
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
const isWhite = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09 || byte === 0x0c || byte === 0x00;

/** The pieces of one object: where its body starts and ends, whether it is a stream, where `endobj` ends. */
function cutObject(pdf: Buffer, object: Located, end: number): { bodyStart: number; bodyEnd: number; objectEnd: number; stream: boolean } {
  const header = OBJECT_HEADER.exec(pdf.toString('latin1', object.offset, Math.min(object.offset + 40, end)));
  if (!header || Number(header[1]) !== object.number || Number(header[2]) !== object.generation) {
    throw new NotCompactable(`object ${object.number} is not where the xref says`);
  }
  const bodyStart = object.offset + header[0].length;
  const endobj = pdf.subarray(bodyStart, end).lastIndexOf('endobj', undefined, 'latin1');
  if (endobj < 0) throw new NotCompactable(`object ${object.number} has no endobj`);
  let bodyEnd = bodyStart + endobj;
  while (bodyEnd > bodyStart && isWhite(pdf[bodyEnd - 1]!)) bodyEnd -= 1;
  const stream = bodyEnd - bodyStart >= 9 && pdf.toString('latin1', bodyEnd - 9, bodyEnd) === 'endstream';
  return { bodyStart, bodyEnd, objectEnd: bodyStart + endobj + 'endobj'.length, stream };
}

/** xref stream entry widths: type 1 byte, offset or object-stream number 4 bytes, generation or index 2 bytes. */
const W = [1, 4, 2] as const;

function writeCompacted(pdf: Buffer, chain: XrefChain): Buffer {
  const { live, boundaries, trailer } = chain;
  if (pdf.length >= 2 ** 32) throw new NotCompactable('too large for 4-byte offsets');
  const firstObject = live.reduce((min, o) => Math.min(min, o.offset), pdf.length);
  const header = Buffer.from(pdf.subarray(0, firstObject));
  // Object streams need PDF 1.5: lift an older version in place (same length, nothing moves).
  const version = /^%PDF-1\.([0-4])/.exec(header.toString('latin1', 0, 8));
  if (version) header.write('5', 7, 'latin1');

  const parts: Buffer[] = [header];
  let written = header.length;
  const push = (chunk: Buffer) => {
    parts.push(chunk);
    written += chunk.length;
  };
  // Entries of the xref stream by object number: [type, field2, field3].
  const entries = new Map<number, [number, number, number]>();
  let nextNumber = chain.size;
  let pending: { number: number; body: Buffer }[] = [];
  const packed: { number: number; data: Buffer; count: number; first: number }[] = [];

  const flush = () => {
    if (pending.length === 0) return;
    const streamNumber = nextNumber++;
    let offset = 0;
    const index: string[] = [];
    pending.forEach((o, i) => {
      index.push(`${o.number} ${offset}`);
      entries.set(o.number, [2, streamNumber, i]);
      offset += o.body.length + 1;
    });
    const head = Buffer.from(`${index.join(' ')}\n`, 'latin1');
    const bodies = pending.flatMap((o) => [o.body, NEWLINE]);
    packed.push({ number: streamNumber, data: deflate(Buffer.concat([head, ...bodies])), count: pending.length, first: head.length });
    pending = [];
  };

  for (let i = 0; i < live.length; i++) {
    const object = live[i]!;
    const cut = cutObject(pdf, object, nextBoundary(boundaries, object.offset));
    if (cut.stream || object.generation !== 0) {
      entries.set(object.number, [1, written, object.generation]);
      push(pdf.subarray(object.offset, cut.objectEnd));
      push(NEWLINE);
      continue;
    }
    pending.push({ number: object.number, body: pdf.subarray(cut.bodyStart, cut.bodyEnd) });
    if (pending.length === OBJECTS_PER_STREAM) flush();
  }
  flush();

  for (const stream of packed) {
    const data = stream.data;
    entries.set(stream.number, [1, written, 0]);
    push(Buffer.from(`${stream.number} 0 obj\n<</Type /ObjStm /N ${stream.count} /First ${stream.first} /Filter /FlateDecode /Length ${data.length}>>\nstream\n`, 'latin1'));
    push(data);
    push(ENDSTREAM);
  }

  const xrefNumber = nextNumber++;
  const size = nextNumber;
  entries.set(xrefNumber, [1, written, 0]);
  const rows = Buffer.alloc(size * (W[0] + W[1] + W[2]));
  for (let n = 0; n < size; n++) {
    const [type, f2, f3] = entries.get(n) ?? (n === 0 ? [0, 0, 65535] : [0, 0, 0]);
    const at = n * 7;
    rows.writeUInt8(type, at);
    rows.writeUInt32BE(f2, at + 1);
    rows.writeUInt16BE(f3, at + 5);
  }
  const xrefData = deflate(rows);
  const keep = ['Root', 'Info', 'ID'].map((key) => [key, trailer.get(PDFName.of(key))] as const).filter(([, value]) => value !== undefined);
  const kept = keep.map(([key, value]) => `/${key} ${value!.toString()}`).join(' ');
  const xrefAt = written;
  push(Buffer.from(`${xrefNumber} 0 obj\n<</Type /XRef /Size ${size} /W [${W.join(' ')}] ${kept} /Filter /FlateDecode /Length ${xrefData.length}>>\nstream\n`, 'latin1'));
  push(xrefData);
  push(ENDSTREAM);
  push(Buffer.from(`startxref\n${xrefAt}\n%%EOF\n`, 'latin1'));
  return Buffer.concat(parts, written);
}

const NEWLINE = Buffer.from('\n', 'latin1');
const ENDSTREAM = Buffer.from('\nendstream\nendobj\n', 'latin1');
