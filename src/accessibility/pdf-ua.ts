/**
 * PDF/UA-1 (ISO 14289-1) for the tagged PDFs Chromium prints, and the machine check of what the file
 * claims. Chromium already writes the structure tree, `/Lang`, `/MarkInfo`, `DisplayDocTitle`, `/Tabs /S`,
 * links in `Link` elements and `TH` with `/Scope`; `makePdfUa` adds what it leaves out — every painting
 * operation outside its marked content becomes an artifact (content-marks.ts), each link annotation gets
 * its `/Contents`, and the XMP says `pdfuaid:part 1` with the title (beside PDF/A's identifier and its
 * extension schema when the file is PDF/A). `checkPdfUa` reads any PDF and reports the Matterhorn
 * Protocol's machine-checkable failure conditions listed in CHECKPOINTS (docs/accessibility.md).
 * Both run on a thread (accessibility-thread.ts): they parse the whole file.
 */
import {
  decodePDFRawStream,
  PDFArray,
  PDFBool,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  PDFNumber,
  type PDFObject,
  PDFRawStream,
  PDFRef,
  PDFStream,
  PDFString,
  PDFWriter,
} from '@cantoo/pdf-lib';
import { constants, deflateSync, inflateSync } from 'node:zlib';
import { markArtifacts, surveyMarks } from './content-marks.js';

/** The checkpoints the check covers, with what each failure means in a reader's words. */
export const CHECKPOINTS = {
  '01-004': 'Tagged content is present inside content marked as an artifact',
  '01-005': 'Content is neither marked as an artifact nor tagged as real content',
  '06-001': 'The document has no XMP metadata',
  '06-002': 'The XMP metadata does not include the PDF/UA identifier',
  '06-003': 'The XMP metadata does not contain a title (dc:title)',
  '07-001': 'The viewer preferences do not say to show the document title (DisplayDocTitle)',
  '07-002': 'DisplayDocTitle is false',
  '10-001': 'A font has no Unicode mapping, so its text cannot be read out',
  '11-001': 'The natural language of the text cannot be determined (no /Lang)',
  '13-004': 'A figure has no alternative text',
  '14-002': 'The first numbered heading is not H1',
  '14-003': 'Numbered heading levels are skipped',
  '15-003': 'A table header cell (TH) has no Scope',
  '28-004': 'An annotation has no Contents (alternative description)',
  '28-011': 'A link annotation is not nested within a Link tag',
  '31-009': 'A font program is not embedded',
} as const;
export type Checkpoint = keyof typeof CHECKPOINTS;

export interface AccessibilityFinding {
  checkpoint: Checkpoint;
  message: string;
  /** 1-based, where the finding belongs to a page. */
  page?: number;
  /**
   * The HTML element the failing structure element is printed from, where its tag names one: `h1`…`h6`
   * for a heading, `th` for a table header cell, `img` for a figure, `a` for a link. For programs (the
   * 422 item's `ctx.element`); the check-accessibility answer does not list it.
   */
  element?: string;
}

export interface AccessibilityReport {
  /** The check that ran (CHECK_NAME). */
  check: string;
  compliant: boolean;
  /** Every checkpoint the check ran, failed or not. */
  checked: Checkpoint[];
  findings: AccessibilityFinding[];
  /** Findings beyond this many of one checkpoint are counted, not listed. */
  truncated: number;
}

/** The name of the check a delivered file names (`accessibility_checks`). */
export const CHECK_NAME = `PDF/UA-1 machine check (Matterhorn ${Object.keys(CHECKPOINTS).length} checkpoints)`;

const name = (n: string) => PDFName.of(n);
/** Structure elements walked at most (a 15,000-row table has ~100,000). */
const MAX_STRUCT_NODES = 2_000_000;
const MAX_FINDINGS_PER_CHECKPOINT = 20;

/**
 * `parseSpeed` Infinity: on its own thread the parse has no event loop to yield to (pdf-lib's default
 * waits a timer tick every 100 objects). `forIncrementalUpdate`: the made file is the input plus an
 * update of the objects changed, not pdf-lib's rewrite of every object.
 */
async function load(pdf: Uint8Array, forIncrementalUpdate = false): Promise<PDFDocument> {
  return PDFDocument.load(pdf, {
    updateMetadata: false,
    ignoreEncryption: false,
    parseSpeed: Number.POSITIVE_INFINITY,
    forIncrementalUpdate,
  });
}

/** Sets entries of the indirect object `ref` (a dictionary). */
function setEntries(doc: PDFDocument, ref: PDFRef, entries: Record<string, PDFObject>): void {
  const dict = doc.context.lookup(ref);
  if (!(dict instanceof PDFDict)) throw new Error(`object ${ref} is not a dictionary`);
  for (const [key, value] of Object.entries(entries)) dict.set(name(key), value);
}

/** One stream's decoded bytes at most: a 20 KB stream may inflate to gigabytes, outside the thread's heap ceiling. */
const MAX_DECODED_BYTES = 256 << 20;
/** Raised for a stream past MAX_DECODED_BYTES; the thread names it (accessibility-thread.ts). */
export class StreamTooLargeError extends Error {
  override readonly name = 'StreamTooLargeError';
}

function decoded(stream: PDFObject | undefined): Uint8Array | null {
  if (!(stream instanceof PDFRawStream)) return null;
  const filter = stream.dict.lookup(name('Filter'));
  const only = filter instanceof PDFArray && filter.size() === 1 ? filter.lookup(0) : filter;
  if (only === undefined) return stream.contents;
  if (only === name('FlateDecode') && stream.dict.get(name('DecodeParms')) === undefined) {
    try {
      // zlib's own bound, as it inflates; Z_SYNC_FLUSH reads a truncated stream as far as it goes, as viewers do.
      return inflateSync(stream.contents, { maxOutputLength: MAX_DECODED_BYTES, finishFlush: constants.Z_SYNC_FLUSH });
    } catch (error) {
      if (error instanceof RangeError)
        throw new StreamTooLargeError(`a stream inflates past ${MAX_DECODED_BYTES >> 20} MiB`);
      throw error;
    }
  }
  // Other filters (predictors, LZW, run-length…) by pdf-lib, whose output is not bounded as it goes: only small inputs.
  if (stream.contents.length > MAX_DECODED_BYTES >> 8)
    throw new StreamTooLargeError('a large stream has a filter the check does not bound');
  return decodePDFRawStream(stream).decode();
}

/** A page's content streams, decoded, in order. */
function pageStreams(doc: PDFDocument, pageDict: PDFDict): Uint8Array[] {
  const contents = pageDict.lookup(name('Contents'));
  const streams = contents instanceof PDFArray ? contents.asArray().map((ref) => doc.context.lookup(ref)) : [contents];
  return streams.map((s) => decoded(s as PDFObject)).filter((bytes): bytes is Uint8Array => bytes !== undefined);
}

/** The content stream objects of a page (and the array of them, when it is an object of its own). */
function contentRefs(pageDict: PDFDict): PDFRef[] {
  const contents = pageDict.get(name('Contents'));
  const array = contents instanceof PDFRef ? pageDict.context.lookup(contents) : contents;
  const refs = array instanceof PDFArray ? array.asArray().filter((r): r is PDFRef => r instanceof PDFRef) : [];
  return contents instanceof PDFRef ? [contents, ...refs] : refs;
}

/** A page's content as one byte string (an array of streams joined, as PDF 32000-1 7.8.2 reads it). */
function pageContent(doc: PDFDocument, pageDict: PDFDict): Uint8Array {
  return Buffer.concat(pageStreams(doc, pageDict).flatMap((bytes) => [bytes, Buffer.from('\n')]));
}

/**
 * The page's content with its untagged painting as artifacts, null when there was none. Stream by
 * stream (the service's own files: each of Chromium's and the watermark's streams holds whole
 * operations): beside Chromium's page, which clips its body, a stream that clips nothing is the watermark.
 */
function markedPage(doc: PDFDocument, pageDict: PDFDict): Uint8Array | null {
  const streams = pageStreams(doc, pageDict);
  const surveys = streams.map((bytes) => surveyMarks(bytes));
  const hasPage = surveys.some((survey) => survey.clips);
  let wrapped = 0;
  const parts = streams.map((bytes, i) => {
    const role = hasPage && !surveys[i]!.clips ? 'watermark' : 'page';
    const marked = markArtifacts(bytes, role, surveys[i]);
    wrapped += marked?.wrapped ?? 0;
    return [marked?.bytes ?? bytes, Buffer.from('\n')];
  });
  return wrapped > 0 ? Buffer.concat(parts.flat()) : null;
}

/**
 * Makes Chromium's tagged PDF a PDF/UA-1 file (see the module comment), and checks the result as it
 * will be written (one parse for both); the PDF must be tagged.
 */
export async function makePdfUa(pdf: Uint8Array): Promise<{ pdf: Uint8Array; report: AccessibilityReport }> {
  const doc = await load(pdf, true);
  const { catalog, context } = doc;
  const root = context.trailerInfo.Root;
  if (!(root instanceof PDFRef) || !(catalog.lookup(name('StructTreeRoot')) instanceof PDFDict))
    throw new Error('the PDF has no structure tree');
  // pdf-lib tells the update of each change to a dictionary (a new one's entries too) by a walk over
  // every object of the document: detached while the changes are made and the update written, and told
  // once which objects changed.
  const snapshot = context.snapshot;
  context.snapshot = undefined;
  const changed: PDFRef[] = [];
  const set = (ref: PDFRef, entries: Record<string, PDFObject>) => {
    setEntries(doc, ref, entries);
    changed.push(ref);
  };
  set(root, {
    MarkInfo: context.obj({ Marked: true }),
    ViewerPreferences: context.obj({ DisplayDocTitle: true }),
  });
  // Content streams replaced, freed in the update (compaction then leaves them out) unless a page kept them.
  const replaced: PDFRef[] = [];
  const kept = new Set<number>();
  for (const page of doc.getPages()) {
    const marked = markedPage(doc, page.node);
    // zlib's native deflate, not pdf-lib's JavaScript one (pako): the rewritten content of every page goes through it.
    const refs = contentRefs(page.node);
    if (marked) {
      replaced.push(...refs);
      const stream = context.stream(deflateSync(marked), { Filter: 'FlateDecode' });
      set(page.ref, { Contents: context.register(stream) });
    } else for (const ref of refs) kept.add(ref.objectNumber);
    const annots = page.node.lookup(name('Annots'));
    if (!(annots instanceof PDFArray)) continue;
    set(page.ref, { Tabs: name('S') });
    for (const ref of annots.asArray()) {
      const annot = context.lookup(ref);
      if (!(annot instanceof PDFDict) || annot.get(name('Contents')) !== undefined) continue;
      const description = PDFHexString.fromText(linkDescription(annot));
      if (ref instanceof PDFRef) set(ref, { Contents: description });
      else {
        // A direct annotation lives in the page (in the update already) or in an array object of its own.
        annot.set(name('Contents'), description);
        const array = page.node.get(name('Annots'));
        if (array instanceof PDFRef) changed.push(array);
      }
    }
  }
  const title = infoTitle(doc) ?? '';
  const existing = decoded(catalog.lookup(name('Metadata')));
  const xmp = existing ? withPdfUaId(Buffer.from(existing).toString('utf8')) : freshXmp(title);
  const stream = context.stream(Buffer.from(xmp, 'utf8'), { Type: 'Metadata', Subtype: 'XML' });
  set(root, { Metadata: context.register(stream) });
  if (!snapshot) throw new Error('the PDF was not read for an incremental update');
  // New objects (numbers past the input's) go into the update on their own.
  snapshot.markRefsForSave(changed);
  for (const ref of replaced) if (!kept.has(ref.objectNumber)) snapshot.markDeletedRef(ref);
  const report = checkDocument(doc);
  // The update written as doc.save() would, with the snapshot still detached: its trailer's new
  // dictionaries would each walk the document again.
  const update = await PDFWriter.forContextWithSnapshot(
    context,
    Number.POSITIVE_INFINITY,
    snapshot,
  ).serializeToBuffer();
  const made = new Uint8Array(pdf.byteLength + update.byteLength);
  made.set(pdf);
  made.set(update, pdf.byteLength);
  return { pdf: made, report };
}

function linkDescription(annot: PDFDict): string {
  const action = annot.lookup(name('A'));
  const uri = action instanceof PDFDict ? action.lookup(name('URI')) : undefined;
  if (uri instanceof PDFString || uri instanceof PDFHexString) return `Link to ${uri.decodeText()}`;
  if (annot.lookup(name('Subtype')) === name('Link')) return 'Link to a place in this document';
  return 'Annotation';
}

function infoTitle(doc: PDFDocument): string | undefined {
  const info = doc.context.lookup(doc.context.trailerInfo.Info);
  const title = info instanceof PDFDict ? info.lookup(name('Title')) : undefined;
  return title instanceof PDFString || title instanceof PDFHexString ? title.decodeText() : undefined;
}

const escapeXml = (v: string) =>
  v.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
const PDFUAID = 'http://www.aiim.org/pdfua/ns/id/';
const UAID_DESCRIPTION = `<rdf:Description rdf:about="" xmlns:pdfuaid="${PDFUAID}"><pdfuaid:part>1</pdfuaid:part></rdf:Description>`;
// PDF/A allows only its predefined XMP schemas unless the file describes the others (ISO 19005-2, 6.6.2.3).
const UAID_SCHEMA = `<rdf:li rdf:parseType="Resource"><pdfaSchema:schema>PDF/UA Universal Accessibility Schema</pdfaSchema:schema><pdfaSchema:namespaceURI>${PDFUAID}</pdfaSchema:namespaceURI><pdfaSchema:prefix>pdfuaid</pdfaSchema:prefix><pdfaSchema:property><rdf:Seq><rdf:li rdf:parseType="Resource"><pdfaProperty:name>part</pdfaProperty:name><pdfaProperty:valueType>Integer</pdfaProperty:valueType><pdfaProperty:category>internal</pdfaProperty:category><pdfaProperty:description>Indicates, which part of ISO 14289 standard is followed</pdfaProperty:description></rdf:li></rdf:Seq></pdfaSchema:property></rdf:li>`;

/** Our own XMP (pdfa.ts wrote it) with the PDF/UA identifier, and its schema described when the file is PDF/A. */
export function withPdfUaId(xmp: string): string {
  if (xmp.includes('pdfuaid:part')) return xmp;
  let out = xmp.replace('</rdf:RDF>', `${UAID_DESCRIPTION}\n</rdf:RDF>`);
  if (!out.includes('pdfaid:part')) return out;
  if (out.includes('<pdfaExtension:schemas><rdf:Bag>'))
    return out.replace('<pdfaExtension:schemas><rdf:Bag>', `<pdfaExtension:schemas><rdf:Bag>${UAID_SCHEMA}`);
  out = out.replace(
    '</rdf:RDF>',
    `<rdf:Description rdf:about="" xmlns:pdfaExtension="http://www.aiim.org/pdfa/ns/extension/" xmlns:pdfaSchema="http://www.aiim.org/pdfa/ns/schema#" xmlns:pdfaProperty="http://www.aiim.org/pdfa/ns/property#"><pdfaExtension:schemas><rdf:Bag>${UAID_SCHEMA}</rdf:Bag></pdfaExtension:schemas></rdf:Description>\n</rdf:RDF>`,
  );
  return out;
}

function freshXmp(title: string): string {
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  return `<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/">
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:xmp="http://ns.adobe.com/xap/1.0/">
<dc:format>application/pdf</dc:format>
<dc:title><rdf:Alt><rdf:li xml:lang="x-default">${escapeXml(title)}</rdf:li></rdf:Alt></dc:title>
<xmp:MetadataDate>${now}</xmp:MetadataDate>
</rdf:Description>
${UAID_DESCRIPTION}
</rdf:RDF>
</x:xmpmeta>
<?xpacket end="w"?>`;
}

/** The machine check of CHECKPOINTS on any PDF (an encrypted one is refused by the caller's load). */
export async function checkPdfUa(pdf: Uint8Array): Promise<AccessibilityReport> {
  return checkDocument(await load(pdf));
}

function checkDocument(doc: PDFDocument): AccessibilityReport {
  const { catalog, context } = doc;
  const findings: AccessibilityFinding[] = [];
  const counts = new Map<Checkpoint, number>();
  let truncated = 0;
  const fail = (
    checkpoint: Checkpoint,
    message: string,
    { page, element }: { page?: number; element?: string } = {},
  ) => {
    const seen = (counts.get(checkpoint) ?? 0) + 1;
    counts.set(checkpoint, seen);
    if (seen > MAX_FINDINGS_PER_CHECKPOINT) truncated++;
    else findings.push({ checkpoint, message, ...(page ? { page } : {}), ...(element ? { element } : {}) });
  };

  // Metadata and catalog.
  const xmp = decoded(catalog.lookup(name('Metadata')));
  const xmpText = xmp ? Buffer.from(xmp).toString('utf8') : '';
  if (!xmp) fail('06-001', 'The document has no XMP metadata stream.');
  else {
    if (!/pdfuaid:part(?:>|=["'])1/.test(xmpText)) fail('06-002', 'The XMP metadata does not say pdfuaid:part 1.');
    if (!/<dc:title>[\s\S]*?<rdf:li[^>]*>[^<\s][^<]*<\/rdf:li>/.test(xmpText))
      fail('06-003', 'The XMP metadata has no dc:title, or an empty one.');
  }
  const prefs = catalog.lookup(name('ViewerPreferences'));
  const display = prefs instanceof PDFDict ? prefs.lookup(name('DisplayDocTitle')) : undefined;
  if (!(display instanceof PDFBool)) fail('07-001', 'The viewer preferences have no DisplayDocTitle.');
  else if (!display.asBoolean()) fail('07-002', 'DisplayDocTitle is false: viewers show the file name, not the title.');
  const lang = catalog.lookup(name('Lang'));
  if (!(lang instanceof PDFString || lang instanceof PDFHexString) || lang.decodeText().trim() === '')
    fail('11-001', 'The document declares no language (/Lang in the catalog).');

  // Content: tagged or an artifact, page by page.
  const pages = doc.getPages();
  const pageIndex = new Map<PDFRef, number>();
  pages.forEach((page, i) => pageIndex.set(page.ref, i + 1));
  const root = catalog.lookup(name('StructTreeRoot'));
  const markInfo = catalog.lookup(name('MarkInfo'));
  const marked = markInfo instanceof PDFDict && markInfo.lookup(name('Marked')) instanceof PDFBool;
  if (!(root instanceof PDFDict) || !marked)
    fail('01-005', 'The document is not tagged: it has no structure tree (or is not marked as tagged).');
  const fonts = new Set<PDFDict>();
  pages.forEach((page, i) => {
    const survey = surveyMarks(pageContent(doc, page.node));
    if (survey.unmarked.length > 0)
      fail(
        '01-005',
        `${survey.unmarked.length} painting operations on page ${i + 1} are neither tagged nor artifacts.`,
        { page: i + 1 },
      );
    if (survey.taggedInArtifact > 0)
      fail('01-004', `Page ${i + 1} has tagged content inside an artifact.`, { page: i + 1 });
    collectFonts(page.node, fonts);
    const annots = page.node.lookup(name('Annots'));
    if (annots instanceof PDFArray) {
      for (const annot of annots.asArray().map((ref) => context.lookup(ref))) {
        if (!(annot instanceof PDFDict)) continue;
        const subtype = annot.lookup(name('Subtype'));
        if (subtype === name('Popup')) continue;
        if (subtype !== name('Widget') && annot.get(name('Contents')) === undefined)
          fail('28-004', `An annotation on page ${i + 1} has no Contents.`, {
            page: i + 1,
            ...(subtype === name('Link') ? { element: 'a' } : {}),
          });
        if (subtype === name('Link') && !(annot.lookup(name('StructParent')) instanceof PDFNumber))
          fail('28-011', `A link on page ${i + 1} is not in the structure tree.`, { page: i + 1, element: 'a' });
      }
    }
  });
  for (const font of fonts) checkFont(font, fail);

  // The structure tree: figures, table headers, headings.
  if (root instanceof PDFDict) {
    let lastHeading = 0;
    let nodes = 0;
    const stack: PDFObject[] = [root.get(name('K'))].filter((k): k is PDFObject => k !== undefined);
    const seen = new Set<PDFObject>();
    while (stack.length > 0 && nodes < MAX_STRUCT_NODES) {
      let item = stack.pop()!;
      if (item instanceof PDFRef) {
        if (seen.has(item)) continue;
        seen.add(item);
        item = context.lookup(item) as PDFObject;
      }
      if (item instanceof PDFArray) {
        for (let i = item.size() - 1; i >= 0; i--) stack.push(item.get(i));
        continue;
      }
      if (
        !(item instanceof PDFDict) ||
        item.lookup(name('Type')) === name('MCR') ||
        item.lookup(name('Type')) === name('OBJR')
      )
        continue;
      nodes++;
      const type = item.lookup(name('S'));
      const tag = type instanceof PDFName ? type.decodeText() : '';
      const pg = item.get(name('Pg'));
      const page = pg instanceof PDFRef ? pageIndex.get(pg) : undefined;
      const where = page ? ` on page ${page}` : '';
      if (tag === 'Figure' && !hasText(item, 'Alt') && !hasText(item, 'ActualText'))
        fail('13-004', `A figure${where} has no alternative text.`, { page, element: 'img' });
      if (tag === 'TH' && !hasScope(item))
        fail('15-003', `A table header cell${where} has no Scope.`, { page, element: 'th' });
      const level = /^H([1-6])$/.exec(tag)?.[1];
      if (level) {
        const n = Number(level);
        if (lastHeading === 0 && n !== 1)
          fail('14-002', `The first heading is H${n}${where}, not H1.`, { page, element: `h${n}` });
        else if (lastHeading > 0 && n > lastHeading + 1)
          fail('14-003', `Heading H${n}${where} follows H${lastHeading}: level ${lastHeading + 1} is skipped.`, {
            page,
            element: `h${n}`,
          });
        lastHeading = n;
      }
      const kids = item.get(name('K'));
      if (kids !== undefined) stack.push(kids);
    }
  }
  const failed = new Set(findings.map((f) => f.checkpoint));
  return {
    check: CHECK_NAME,
    compliant: failed.size === 0 && truncated === 0,
    checked: Object.keys(CHECKPOINTS) as Checkpoint[],
    findings,
    truncated,
  };
}

function hasText(dict: PDFDict, key: string): boolean {
  const value = dict.lookup(name(key));
  return (value instanceof PDFString || value instanceof PDFHexString) && value.decodeText().trim() !== '';
}

function hasScope(th: PDFDict): boolean {
  const attrs = th.lookup(name('A'));
  const list = attrs instanceof PDFArray ? attrs.asArray() : attrs ? [attrs] : [];
  return (
    list.some((a) => {
      const dict = a instanceof PDFRef ? th.context.lookup(a) : a;
      return dict instanceof PDFDict && dict.lookup(name('Scope')) instanceof PDFName;
    }) || hasText(th, 'Headers')
  );
}

/** Fonts of a page and of the form XObjects it paints (one level: Chromium nests no deeper). */
function collectFonts(node: PDFDict, into: Set<PDFDict>): void {
  const resources = node.lookup(name('Resources'));
  if (!(resources instanceof PDFDict)) return;
  const fonts = resources.lookup(name('Font'));
  if (fonts instanceof PDFDict)
    for (const [, ref] of fonts.entries()) {
      const font = node.context.lookup(ref);
      if (font instanceof PDFDict) into.add(font);
    }
  const xobjects = resources.lookup(name('XObject'));
  if (xobjects instanceof PDFDict && node.lookup(name('Type')) === name('Page'))
    for (const [, ref] of xobjects.entries()) {
      const form = node.context.lookup(ref);
      if (form instanceof PDFStream && form.dict.lookup(name('Subtype')) === name('Form'))
        collectFonts(form.dict, into);
    }
}

function checkFont(font: PDFDict, fail: (c: Checkpoint, m: string) => void): void {
  const subtype = font.lookup(name('Subtype'));
  const base = font.lookup(name('BaseFont'));
  const label = base instanceof PDFName ? base.decodeText() : 'a font';
  if (subtype === name('Type3')) return;
  let descriptorHolder: PDFObject | undefined = font;
  if (subtype === name('Type0')) {
    const descendants = font.lookup(name('DescendantFonts'));
    descriptorHolder = descendants instanceof PDFArray ? font.context.lookup(descendants.get(0)) : undefined;
  }
  const descriptor = descriptorHolder instanceof PDFDict ? descriptorHolder.lookup(name('FontDescriptor')) : undefined;
  const embedded =
    descriptor instanceof PDFDict &&
    ['FontFile', 'FontFile2', 'FontFile3'].some((k) => descriptor.get(name(k)) !== undefined);
  if (!embedded) fail('31-009', `The font ${label} is not embedded.`);
  const encoding = font.lookup(name('Encoding'));
  const standard = subtype !== name('Type0') && encoding instanceof PDFName && encoding !== name('Identity-H');
  if (font.get(name('ToUnicode')) === undefined && !standard)
    fail('10-001', `The font ${label} has no Unicode mapping (ToUnicode).`);
}
