/**
 * PDF/A output for the PDFs Chromium writes (`page.pdf({ tagged: true, outline: true, … })`).
 *
 * Two routes, chosen per variant (`bench/costs/pdfa-bench.ts`, peers' invoice, 2 busy cores; p50 wall / CPU):
 * - 'pdf/a-2b', 'pdf/a-3b': complete Chromium's own file in process with @cantoo/pdf-lib. Chromium already
 *   embeds every font (Type3 for CFF fonts such as Noto CJK, allowed) and writes a binary header
 *   comment, Print-flagged links, no encryption, JavaScript or attachments; PDF/A-2 allows its
 *   transparency. Missing are the sRGB OutputIntent, the XMP packet, an Info dictionary that matches
 *   it, and the trailer ID. Completion adds those, keeps tags, outline and page content untouched, and
 *   costs a tenth of a Ghostscript rewrite, which drops the tags and the Creator and maps some CJK
 *   characters to look-alike code points (figures: docs/performance-log/2026-11-23-to-28-pdf-libraries.md).
 *   Whole-file work (parse and write) grows with the object count.
 * - 'pdf/a-1b': a Ghostscript rewrite. PDF/A-1 forbids transparency (Chromium writes it for any CSS
 *   opacity, RGBA colour or emoji) and requires a CIDSet in every subset CID font (Chromium writes
 *   none). Ghostscript renders each page that has transparency to one 300 dpi image, so text on such a
 *   page is no longer extractable: that is the price of PDF/A-1, and why 2b is the one to recommend.
 *   2b/3b fall back to this route when the input holds something completion cannot fix.
 * Both routes end in `writeArchivalMetadata`, so Info and XMP always come from one set of values.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AFRelationship,
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  PDFNumber,
  PDFRawStream,
  PDFRef,
  PDFString,
  type PDFObject,
} from '@cantoo/pdf-lib';
import { describeGsFailure, runGhostscript } from '../pdf/ghostscript.js';
import { AppError } from '../shared/errors.js';
import { PDF_PRODUCER, readInfoTitle } from './document-info.js';
import { prepareRewrite } from '../pdf/pdf-rewrite.js';
import { checkPdfA } from './pdfa-check.js';

/** The PDF/A flavours the service can produce (all level B: visual appearance preserved). */
export type PdfAVariant = 'pdf/a-1b' | 'pdf/a-2b' | 'pdf/a-3b';

/** Document facts written to both the Info dictionary and the XMP packet. */
export interface PdfAMeta {
  /** Defaults to the input's Info Title (see document-info.ts for what the service writes there). */
  title?: string;
  author?: string;
  /** Defaults to Chromium's CreationDate; whole seconds are kept, as Info dates cannot say more. */
  creationDate?: Date;
  /** Files to embed (PDF/A-3b only): each gets /AF, its MIME type and dates, as PDF/A-3 requires. */
  attachments?: PdfAAttachment[];
  /** Extra rdf:Description blocks for the XMP packet (e.g. the Factur-X extension schema, issue 16). */
  xmpExtension?: string;
}

/** The document facts, and whose conversion it is. */
export interface PdfAOptions extends PdfAMeta {
  /** Ghostscript runs are shared fairly between accounts (never written to the file). @defaultValue '' */
  accountId?: string;
}

/** An associated file (PDF/A-3, ISO 19005-3 6.8). */
export interface PdfAAttachment {
  name: string;
  bytes: Uint8Array;
  mimeType: string;
  description: string;
  /** How the file relates to the document (/AFRelationship). */
  relationship: 'Alternative' | 'Data' | 'Source' | 'Supplement';
}

const VARIANTS: readonly PdfAVariant[] = ['pdf/a-1b', 'pdf/a-2b', 'pdf/a-3b'];
const ICC_URL = new URL('./assets/srgb.icc', import.meta.url);
/** Resolution of the page images Ghostscript makes when PDF/A-1 forces it to flatten transparency:
 * print quality; its default of 720 dpi makes files several times larger and slower for no visible gain. */
const GS_FLATTEN_DPI = 300;
/** pdf-lib parses and writes on the event loop. Yielding every N objects breaks up a big document's
 * work (not fully: some of pdf-lib's steps do not yield), while a one-page invoice never yields. */
const OBJECTS_PER_TICK = 1000;

/** True when `x` names a supported PDF/A variant, e.g. from a request body. */
export function isPdfAVariant(x: unknown): x is PdfAVariant {
  return typeof x === 'string' && (VARIANTS as readonly string[]).includes(x);
}

/**
 * Turns a Chromium PDF into a PDF/A file of the given variant and checks the result (pdfa-check.ts);
 * throws PDFA_CONVERSION_FAILED, also for a result that breaks a checked rule.
 */
export async function toPdfA(pdf: Buffer, variant: PdfAVariant, meta: PdfAOptions = {}): Promise<Buffer> {
  const out = await convertToPdfA(pdf, variant, meta);
  const findings = await checkPdfA(out, Number(variant.charAt(6)) as 1 | 2 | 3);
  if (findings.length > 0) {
    throw new AppError(
      'PDFA_CONVERSION_FAILED',
      `the ${variant.toUpperCase()} file failed the PDF/A check: ${findings.map((f) => `${f.rule} (${f.message})`).join('; ')}`,
    );
  }
  return out;
}

async function convertToPdfA(pdf: Buffer, variant: PdfAVariant, meta: PdfAOptions): Promise<Buffer> {
  if (!isPdfAVariant(variant)) {
    throw new AppError(
      'PDFA_CONVERSION_FAILED',
      `unknown PDF/A variant "${String(variant)}"; use one of ${VARIANTS.join(', ')}`,
    );
  }
  if (meta.creationDate && Number.isNaN(meta.creationDate.getTime())) {
    throw new AppError('PDFA_CONVERSION_FAILED', 'meta.creationDate is an invalid Date');
  }
  if (meta.attachments?.length && variant !== 'pdf/a-3b') {
    throw new AppError('PDFA_CONVERSION_FAILED', `${variant.toUpperCase()} forbids file attachments; use pdf/a-3b`);
  }
  if (variant === 'pdf/a-1b') return convertWithGhostscript(pdf, variant, meta);
  try {
    return await completeWithPdfLib(pdf, variant, meta);
  } catch (error) {
    if (!(error instanceof NotCompletableError)) throw error;
    return convertWithGhostscript(pdf, variant, meta);
  }
}

/** Something in the input that in-place completion cannot make conformant; Ghostscript can. */
class NotCompletableError extends Error {
  override readonly name = 'NotCompletableError';
}

/** Route 1 (2b/3b): add what PDF/A needs to Chromium's file, keeping its tags. Exported for the bench. */
export async function completeWithPdfLib(pdf: Buffer, variant: PdfAVariant, meta: PdfAMeta = {}): Promise<Buffer> {
  if (variant === 'pdf/a-1b') {
    throw new AppError(
      'PDFA_CONVERSION_FAILED',
      'PDF/A-1b cannot be completed in place (transparency, CIDSet); use toPdfA',
    );
  }
  const doc = await loadPdf(pdf);
  makeConformant(doc, variant);
  await attachFiles(doc, meta);
  writeArchivalMetadata(doc, variant, meta);
  return saveThrough(doc, variant);
}

/** Route 2 (1b, and 2b/3b fallback): a Ghostscript pdfwrite pass, then our metadata. Exported for the bench. */
export async function convertWithGhostscript(
  pdf: Buffer,
  variant: PdfAVariant,
  meta: PdfAOptions = {},
): Promise<Buffer> {
  // Ghostscript's PDF/A-1 pass drops a Title written in UTF-16 (Chromium's for any non-ASCII <title>,
  // document-info.ts's for every title): take it from the input.
  const title = meta.title ?? (await readInfoTitle(pdf).catch(() => undefined));
  const rewritten = await pdfwriteToPdfA(pdf, variant, meta.accountId ?? '');
  const doc = await loadPdf(rewritten);
  // Ghostscript gives up on PDF/A for input it cannot make conformant and writes a plain PDF; its XMP
  // then lacks pdfaid. Do not stamp our claim onto such a file.
  const gsXmp = doc.context.lookup(doc.catalog.get(name('Metadata')));
  const xmpText = gsXmp instanceof PDFRawStream ? Buffer.from(gsXmp.contents).toString('utf8') : '';
  const part = /pdfaid:part(?:=['"]|>)(\d)/.exec(xmpText)?.[1];
  if (part !== variant.charAt(6)) {
    throw new AppError(
      'PDFA_CONVERSION_FAILED',
      `Ghostscript could not produce ${variant.toUpperCase()} from this PDF`,
    );
  }
  // Ghostscript writes its own XMP from the Info it could carry over (it drops Chromium's Creator);
  // rewriting both here keeps them equal and carries the title and meta.author/creationDate.
  await attachFiles(doc, meta);
  writeArchivalMetadata(doc, variant, { ...meta, title });
  return saveThrough(doc, variant);
}

async function loadPdf(pdf: Buffer): Promise<PDFDocument> {
  let doc: PDFDocument;
  try {
    // updateMetadata: false, or pdf-lib stamps its own Producer/dates into Info behind our back.
    // ignoreEncryption: pdf-lib's own EncryptedPDFError fails `instanceof`; we check isEncrypted below.
    doc = await PDFDocument.load(pdf, { updateMetadata: false, ignoreEncryption: true, parseSpeed: OBJECTS_PER_TICK });
  } catch (cause) {
    throw new AppError('PDFA_CONVERSION_FAILED', 'the PDF could not be parsed for PDF/A conversion', { cause });
  }
  if (doc.isEncrypted) {
    throw new AppError(
      'PDFA_CONVERSION_FAILED',
      'the PDF is encrypted, which PDF/A forbids; render it without a password or permissions',
    );
  }
  return doc;
}

async function saveThrough(doc: PDFDocument, variant: PdfAVariant): Promise<Buffer> {
  try {
    // PDF/A-2/3 build on PDF 1.7; PDF/A-1 on PDF 1.4, which is what Ghostscript wrote.
    prepareRewrite(doc, variant === 'pdf/a-1b' ? '1.4' : '1.7');
    // No object streams: PDF/A-1 (PDF 1.4) forbids them, and for 2b/3b they would save little.
    const bytes = await doc.save({
      useObjectStreams: false,
      addDefaultPage: false,
      updateFieldAppearances: false,
      objectsPerTick: OBJECTS_PER_TICK,
    });
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  } catch (cause) {
    throw new AppError('PDFA_CONVERSION_FAILED', 'writing the PDF/A file failed', { cause });
  }
}

const name = (n: string) => PDFName.of(n);
const FORBIDDEN_ANNOTS = new Set(['Sound', 'Movie', 'Screen', '3D', 'RichMedia', 'TrapNet']);
const STANDARD_BLEND_MODES = new Set([
  'Normal',
  'Compatible',
  'Multiply',
  'Screen',
  'Overlay',
  'Darken',
  'Lighten',
  'ColorDodge',
  'ColorBurn',
  'HardLight',
  'SoftLight',
  'Difference',
  'Exclusion',
  'Hue',
  'Saturation',
  'Color',
  'Luminosity',
]);
const EMBEDDED_FONT_KEYS = ['FontFile', 'FontFile2', 'FontFile3'].map(name);
// Annotation flags (PDF 32000-1, 12.5.3): PDF/A needs Print set and these clear.
const ANNOT_PRINT = 4;
const ANNOT_HIDING = 1 | 2 | 32 | 256; // Invisible, Hidden, NoView, ToggleNoView

/**
 * Fixes, in place, what PDF/A-2/3 forbid and Chromium could plausibly write; throws NotCompletableError
 * for what only a rewrite can fix. Chromium 156's output passes as it is (links already carry F 4; no
 * Interpolate, actions beyond URI/GoTo, transfer functions or unembedded fonts): the checks guard
 * against a future Chromium or a template that finds an unusual corner.
 */
function makeConformant(doc: PDFDocument, variant: PdfAVariant): void {
  const catalog = doc.catalog;
  catalog.delete(name('AA')); // document-level actions (6.6.2 of ISO 19005-2)
  const openAction = catalog.lookupMaybe(name('OpenAction'), PDFDict); // an array is a plain destination
  if (openAction && openAction.lookupMaybe(name('S'), PDFName)?.decodeText() !== 'GoTo')
    catalog.delete(name('OpenAction'));
  const names = catalog.lookupMaybe(name('Names'), PDFDict);
  names?.delete(name('JavaScript'));
  // PDF/A-2 allows only PDF/A attachments, which we cannot vouch for; PDF/A-3 allows any file.
  if (variant === 'pdf/a-2b') names?.delete(name('EmbeddedFiles'));
  for (const page of doc.getPages()) {
    page.node.delete(name('AA'));
    const annots = page.node.lookupMaybe(name('Annots'), PDFArray);
    for (let i = 0; annots && i < annots.size(); i++) {
      const annot = annots.lookupMaybe(i, PDFDict);
      if (annot) fixAnnotation(annot);
    }
  }
  for (const [, object] of doc.context.enumerateIndirectObjects()) checkObject(object);
}

function fixAnnotation(annot: PDFDict): void {
  const subtype = annot.lookupMaybe(name('Subtype'), PDFName)?.decodeText() ?? '';
  if (FORBIDDEN_ANNOTS.has(subtype)) throw new NotCompletableError(`annotation type ${subtype}`);
  if (!['Link', 'Popup'].includes(subtype) && !annot.has(name('AP'))) {
    throw new NotCompletableError(`${subtype} annotation without an appearance stream`);
  }
  const flags = annot.lookupMaybe(name('F'), PDFNumber)?.asNumber() ?? 0;
  annot.set(name('F'), PDFNumber.of((flags | ANNOT_PRINT) & ~ANNOT_HIDING));
  annot.delete(name('AA'));
  const action = annot.lookupMaybe(name('A'), PDFDict);
  const kind = action?.lookupMaybe(name('S'), PDFName)?.decodeText();
  if (kind && !['URI', 'GoTo', 'GoToR', 'Named'].includes(kind)) annot.delete(name('A'));
}

function checkObject(object: PDFObject): void {
  const dict = object instanceof PDFRawStream ? object.dict : object instanceof PDFDict ? object : undefined;
  if (!dict) return;
  const get = (key: string) => dict.lookupMaybe(name(key), PDFName)?.decodeText();
  if (object instanceof PDFRawStream) {
    if (dict.has(name('F')) || dict.has(name('FFilter'))) throw new NotCompletableError('stream with an external file');
    const filters = dict.lookup(name('Filter'));
    const list = filters instanceof PDFArray ? filters.asArray() : [filters];
    if (list.some((f) => f instanceof PDFName && ['LZWDecode', 'Crypt'].includes(f.decodeText()))) {
      throw new NotCompletableError('LZW or Crypt stream filter');
    }
    if (get('Subtype') === 'Image') {
      // 6.2.8: Interpolate shall be false; Alternates and OPI are forbidden. Dropping them changes nothing visible.
      for (const key of ['Interpolate', 'Alternates', 'OPI']) dict.delete(name(key));
    }
    if (get('Subtype') === 'PS' || get('Subtype2') === 'PS') throw new NotCompletableError('PostScript XObject');
    return;
  }
  const type = get('Type');
  if (type === 'ExtGState' || dict.has(name('BM'))) {
    const bm = get('BM');
    if (bm && !STANDARD_BLEND_MODES.has(bm)) throw new NotCompletableError(`blend mode ${bm}`);
    if (dict.has(name('TR')) || (dict.has(name('TR2')) && get('TR2') !== 'Default')) {
      throw new NotCompletableError('transfer function in a graphics state');
    }
  }
  if (type === 'Font') checkFontEmbedded(dict);
}

function checkFontEmbedded(font: PDFDict): void {
  const subtype = font.lookupMaybe(name('Subtype'), PDFName)?.decodeText();
  if (subtype === 'Type3') return; // its glyphs are content streams: embedded by definition
  if (subtype === 'Type0') {
    const descendant = font.lookupMaybe(name('DescendantFonts'), PDFArray)?.lookupMaybe(0, PDFDict);
    if (!descendant) throw new NotCompletableError('Type0 font without a descendant font');
    checkFontEmbedded(descendant);
    return;
  }
  const descriptor = font.lookupMaybe(name('FontDescriptor'), PDFDict);
  if (!descriptor || !EMBEDDED_FONT_KEYS.some((key) => descriptor.has(key))) {
    const base = font.lookupMaybe(name('BaseFont'), PDFName)?.decodeText() ?? 'unnamed';
    throw new NotCompletableError(`font ${base} is not embedded`);
  }
}

/** Embeds `meta.attachments`; pdf-lib lists each in the Names tree and the catalog's /AF array. */
async function attachFiles(doc: PDFDocument, meta: PdfAMeta): Promise<void> {
  const now = wholeSeconds(new Date());
  for (const file of meta.attachments ?? []) {
    await doc.attach(file.bytes, file.name, {
      mimeType: file.mimeType,
      description: file.description,
      creationDate: now,
      modificationDate: now,
      afRelationship: AFRelationship[file.relationship],
    });
  }
}

let iccProfile: Uint8Array | undefined;
function srgbProfile(): Uint8Array {
  try {
    iccProfile ??= readFileSync(ICC_URL);
    return iccProfile;
  } catch (cause) {
    throw new AppError(
      'PDFA_CONVERSION_FAILED',
      'The PDF/A colour profile is missing from this installation (the build must copy src/finishing/assets).',
      { cause },
    );
  }
}

/** OutputIntent, XMP, Info and trailer ID: the parts of PDF/A every route must get right together. */
function writeArchivalMetadata(doc: PDFDocument, variant: PdfAVariant, meta: PdfAMeta): void {
  if (!hasPdfAOutputIntent(doc.catalog)) addOutputIntent(doc);
  const facts = collectFacts(doc, variant, meta);
  writeInfo(doc, facts);
  writeXmp(doc, facts);
  // Keep the first ID (the document's identity) when there is one; the second changes because the file did.
  const { context } = doc;
  const oldId = context.lookupMaybe(context.trailerInfo.ID, PDFArray)?.lookup(0);
  const first =
    oldId instanceof PDFHexString || oldId instanceof PDFString
      ? oldId
      : PDFHexString.of(randomBytes(16).toString('hex'));
  context.trailerInfo.ID = context.obj([first, PDFHexString.of(randomBytes(16).toString('hex'))]);
}

function hasPdfAOutputIntent(catalog: PDFDict): boolean {
  const intents = catalog.lookupMaybe(name('OutputIntents'), PDFArray);
  return (intents?.asArray() ?? []).some((_, i) => {
    const intent = intents?.lookupMaybe(i, PDFDict);
    return (
      intent?.lookupMaybe(name('S'), PDFName)?.decodeText() === 'GTS_PDFA1' && intent.has(name('DestOutputProfile'))
    );
  });
}

function addOutputIntent({ context, catalog }: PDFDocument): void {
  const profile = context.register(context.flateStream(srgbProfile(), { N: 3 }));
  const intent = context.obj({
    Type: 'OutputIntent',
    S: 'GTS_PDFA1',
    DestOutputProfile: profile,
    OutputConditionIdentifier: PDFString.of('sRGB IEC61966-2.1'),
    Info: PDFString.of('sRGB IEC61966-2.1'),
    RegistryName: PDFString.of('http://www.color.org'),
  });
  catalog.set(name('OutputIntents'), context.obj([context.register(intent)]));
}

/** One set of values for Info and XMP: the caller's meta first, then what the input's Info says. */
function collectFacts({ context }: PDFDocument, variant: PdfAVariant, meta: PdfAMeta): XmpFacts {
  const oldInfo = context.lookupMaybe(context.trailerInfo.Info, PDFDict);
  const text = (key: string) => {
    const value = oldInfo?.lookup(name(key));
    return value instanceof PDFString || value instanceof PDFHexString ? value.decodeText() : undefined;
  };
  const now = wholeSeconds(new Date());
  return {
    part: Number(variant.charAt(6)),
    title: clean(meta.title ?? text('Title')),
    author: clean(meta.author ?? text('Author')),
    // A request's `metadata` (document-info.ts wrote it into Info before this step).
    subject: clean(text('Subject')),
    keywords: clean(text('Keywords')),
    // Pressroom made the file, whoever printed it first (document-info.ts), unless `metadata.creator` says.
    creator: clean(text('Creator')) ?? PDF_PRODUCER,
    producer: PDF_PRODUCER,
    createdAt: wholeSeconds(meta.creationDate ?? decodeDate(oldInfo?.lookup(name('CreationDate'))) ?? now),
    modifiedAt: now,
    extension: meta.xmpExtension,
  };
}

/** A fresh Info with only keys the XMP mirrors: PDF/A wants every Info entry to match the XMP. */
function writeInfo({ context }: PDFDocument, facts: XmpFacts): void {
  const info = context.obj({
    Producer: PDFHexString.fromText(facts.producer),
    CreationDate: PDFString.fromDate(facts.createdAt),
    ModDate: PDFString.fromDate(facts.modifiedAt),
  });
  if (facts.title) info.set(name('Title'), PDFHexString.fromText(facts.title));
  if (facts.author) info.set(name('Author'), PDFHexString.fromText(facts.author));
  if (facts.creator) info.set(name('Creator'), PDFHexString.fromText(facts.creator));
  if (facts.subject) info.set(name('Subject'), PDFHexString.fromText(facts.subject));
  if (facts.keywords) info.set(name('Keywords'), PDFHexString.fromText(facts.keywords));
  if (context.trailerInfo.Info instanceof PDFRef) context.assign(context.trailerInfo.Info, info);
  else context.trailerInfo.Info = context.register(info);
}

function writeXmp({ context, catalog }: PDFDocument, facts: XmpFacts): void {
  const old = catalog.get(name('Metadata'));
  if (old instanceof PDFRef) context.delete(old);
  // Unfiltered: PDF/A-1 forbids a Filter on the metadata stream, and tools find the packet in the raw bytes.
  const xmp = context.stream(Buffer.from(buildXmp(facts), 'utf8'), { Type: 'Metadata', Subtype: 'XML' });
  catalog.set(name('Metadata'), context.register(xmp));
}

interface XmpFacts {
  part: number;
  title?: string;
  author?: string;
  subject?: string;
  keywords?: string;
  creator?: string;
  producer: string;
  createdAt: Date;
  modifiedAt: Date;
  extension?: string;
}

function buildXmp(f: XmpFacts): string {
  const iso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const opt = (value: string | undefined, xml: (v: string) => string) => (value ? xml(escapeXml(value)) : '');
  // No bytes/encoding attributes on the xpacket header: PDF/A-1 and -2 forbid them.
  return `<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/">
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmlns:pdf="http://ns.adobe.com/pdf/1.3/">
<pdfaid:part>${f.part}</pdfaid:part>
<pdfaid:conformance>B</pdfaid:conformance>
<dc:format>application/pdf</dc:format>
${opt(f.title, (v) => `<dc:title><rdf:Alt><rdf:li xml:lang="x-default">${v}</rdf:li></rdf:Alt></dc:title>`)}
${opt(f.author, (v) => `<dc:creator><rdf:Seq><rdf:li>${v}</rdf:li></rdf:Seq></dc:creator>`)}
${opt(f.subject, (v) => `<dc:description><rdf:Alt><rdf:li xml:lang="x-default">${v}</rdf:li></rdf:Alt></dc:description>`)}
${opt(f.keywords, (v) => `<pdf:Keywords>${v}</pdf:Keywords>`)}
${opt(f.creator, (v) => `<xmp:CreatorTool>${v}</xmp:CreatorTool>`)}
<xmp:CreateDate>${iso(f.createdAt)}</xmp:CreateDate>
<xmp:ModifyDate>${iso(f.modifiedAt)}</xmp:ModifyDate>
<xmp:MetadataDate>${iso(f.modifiedAt)}</xmp:MetadataDate>
<pdf:Producer>${escapeXml(f.producer)}</pdf:Producer>
</rdf:Description>
${f.extension ?? ''}
</rdf:RDF>
</x:xmpmeta>
<?xpacket end="r"?>`;
}

/** Drops what XML 1.0 and UTF-8 cannot carry (control characters, lone surrogates), so the Info
 * entry and its XMP twin stay equal. */
function clean(value: string | undefined): string | undefined {
  const v = value
    // eslint-disable-next-line no-control-regex
    ?.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '')
    .trim();
  return v || undefined;
}

function escapeXml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function decodeDate(value: PDFObject | undefined): Date | undefined {
  if (!(value instanceof PDFString || value instanceof PDFHexString)) return undefined;
  try {
    const date = value.decodeDate();
    return Number.isNaN(date.getTime()) ? undefined : date;
  } catch {
    return undefined;
  }
}

/** Info dates have whole seconds; XMP must state the same instant. */
function wholeSeconds(date: Date): Date {
  return new Date(Math.floor(date.getTime() / 1000) * 1000);
}

/** A Ghostscript pdfwrite pass to PDF/A (ghostscript.ts runs it, under its ceilings and in its pool). */
async function pdfwriteToPdfA(pdf: Buffer, variant: PdfAVariant, accountId: string): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'pressroom-pdfa-'));
  try {
    const [input, output, icc, prefix] = ['in.pdf', 'out.pdf', 'srgb.icc', 'pdfa-def.ps'].map((f) => join(dir, f)) as [
      string,
      string,
      string,
      string,
    ];
    await Promise.all([writeFile(input, pdf), writeFile(icc, srgbProfile()), writeFile(prefix, pdfaPrefix(icc))]);
    const args = [
      '-dNOOUTERSAVE',
      `-dPDFA=${variant.charAt(6)}`,
      '-dPDFACompatibilityPolicy=1',
      '-sColorConversionStrategy=RGB',
      '-sDEVICE=pdfwrite',
      `-r${GS_FLATTEN_DPI}`,
      `--permit-file-read=${icc}`,
      `-sOutputFile=${output}`,
      prefix,
      input,
    ];
    const notAPdf = () =>
      new AppError('PDFA_CONVERSION_FAILED', 'the input is not a PDF (it does not start with %PDF-)');
    const run = await runGhostscript(pdf, args, { cwd: dir, accountId, notAPdf });
    if (run.ended !== 'exit' || run.exitCode !== 0) {
      throw new AppError(
        'PDFA_CONVERSION_FAILED',
        `Ghostscript PDF/A conversion failed: ${describeGsFailure(run)}`,
        run.ended === 'failed' ? { cause: run.error } : {},
      );
    }
    return await readFile(output);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Ghostscript's PDFA_def.ps reduced to the OutputIntent, pointing at our profile (written per call). */
function pdfaPrefix(iccPath: string): string {
  const ps = (s: string) => `(${s.replace(/[\\()]/g, (c) => `\\${c}`)})`;
  return `%!
[/_objdef {icc_PDFA} /type /stream /OBJ pdfmark
[{icc_PDFA} << /N 3 >> /PUT pdfmark
[{icc_PDFA} ${ps(iccPath)} (r) file /PUT pdfmark
[/_objdef {OutputIntent_PDFA} /type /dict /OBJ pdfmark
[{OutputIntent_PDFA} << /Type /OutputIntent /S /GTS_PDFA1 /DestOutputProfile {icc_PDFA}
  /OutputConditionIdentifier (sRGB IEC61966-2.1) /Info (sRGB IEC61966-2.1) /RegistryName (http://www.color.org) >> /PUT pdfmark
[{Catalog} << /OutputIntents [ {OutputIntent_PDFA} ] >> /PUT pdfmark
`;
}
