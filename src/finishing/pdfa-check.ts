/**
 * Our own check of a finished PDF/A file, run on every PDF/A output before it is delivered (issue 16):
 * no PDF/A validator can be installed here (veraPDF needs Maven), so these are the rules a file we
 * made could plausibly break, each named (docs/rendering.md "PDF/A checks") and each tested with a file
 * built to break it (pdfa-check.test.ts). A failing file is a failed generation (refunded), never a
 * silent non-conformance. It is not a full ISO 19005 validation: the rules are the ones our two
 * routes (pdf-lib completion, Ghostscript) are responsible for.
 */
import {
  PDFArray,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  PDFRawStream,
  PDFString,
  type PDFObject,
} from 'pdf-lib';

/** The rule ids, as docs/rendering.md lists them. */
export type PdfARule =
  | 'PDFA-XMP-ID'
  | 'PDFA-OUTPUT-INTENT'
  | 'PDFA-FONTS-EMBEDDED'
  | 'PDFA-NO-ENCRYPTION'
  | 'PDFA-NO-JAVASCRIPT'
  | 'PDFA-DOCUMENT-ID'
  | 'PDFA-ATTACHMENTS';

export interface PdfAFinding {
  rule: PdfARule;
  message: string;
}

const name = (n: string) => PDFName.of(n);
const FONT_FILES = ['FontFile', 'FontFile2', 'FontFile3'].map(name);

/** Every rule `pdf` breaks as a PDF/A of `part` (1, 2 or 3), level B; empty when it passes. */
export async function checkPdfA(pdf: Uint8Array, part: 1 | 2 | 3): Promise<PdfAFinding[]> {
  const findings: PdfAFinding[] = [];
  const add = (rule: PdfARule, message: string) => findings.push({ rule, message });
  const doc = await PDFDocument.load(pdf, { updateMetadata: false, ignoreEncryption: true });
  const { context, catalog } = doc;
  if (doc.isEncrypted || context.trailerInfo.Encrypt) add('PDFA-NO-ENCRYPTION', 'the file is encrypted');
  const id = context.lookupMaybe(context.trailerInfo.ID, PDFArray);
  if (!id || id.size() !== 2 || !id.asArray().every((x) => x instanceof PDFHexString || x instanceof PDFString))
    add('PDFA-DOCUMENT-ID', 'the trailer has no /ID of two strings');
  checkXmpId(catalog, part, add);
  checkOutputIntent(catalog, add);
  const fileSpecs: PDFDict[] = [];
  for (const [, object] of context.enumerateIndirectObjects()) {
    const dict = object instanceof PDFRawStream ? object.dict : object instanceof PDFDict ? object : undefined;
    if (!dict) continue;
    const type = dict.lookupMaybe(name('Type'), PDFName)?.decodeText();
    if (type === 'Font') checkFont(dict, add);
    if (type === 'Filespec' && dict.has(name('EF'))) fileSpecs.push(dict);
    if (hasJavaScript(dict, 0)) add('PDFA-NO-JAVASCRIPT', 'a JavaScript action');
  }
  if (catalog.lookupMaybe(name('Names'), PDFDict)?.has(name('JavaScript')))
    add('PDFA-NO-JAVASCRIPT', 'a document-level JavaScript name tree');
  checkAttachments(catalog, fileSpecs, part, add);
  return findings;
}

/** A JavaScript action in `dict` or in the dictionaries written inside it (actions are often direct objects). */
function hasJavaScript(dict: PDFDict, depth: number): boolean {
  if (dict.get(name('S')) === name('JavaScript') || dict.has(name('JS'))) return true;
  if (depth >= 4) return false;
  return dict
    .values()
    .some(
      (value) =>
        (value instanceof PDFDict && hasJavaScript(value, depth + 1)) ||
        (value instanceof PDFArray &&
          value.asArray().some((item) => item instanceof PDFDict && hasJavaScript(item, depth + 1))),
    );
}

function checkXmpId(catalog: PDFDict, part: number, add: (rule: PdfARule, message: string) => void): void {
  const stream = catalog.lookup(name('Metadata'));
  const xmp = stream instanceof PDFRawStream ? Buffer.from(stream.contents).toString('utf8') : '';
  const declaredPart = /pdfaid:part(?:=['"]|>)(\d)/.exec(xmp)?.[1];
  const conformance = /pdfaid:conformance(?:=['"]|>)([ABU])/.exec(xmp)?.[1];
  if (declaredPart !== String(part) || conformance !== 'B') {
    add(
      'PDFA-XMP-ID',
      `the XMP declares part ${declaredPart ?? 'none'}, conformance ${conformance ?? 'none'}; the file is PDF/A-${part}B`,
    );
  }
}

function checkOutputIntent(catalog: PDFDict, add: (rule: PdfARule, message: string) => void): void {
  const intents = catalog.lookupMaybe(name('OutputIntents'), PDFArray);
  const ok = (intents?.asArray() ?? []).some((_, i) => {
    const intent = intents?.lookupMaybe(i, PDFDict);
    return (
      intent?.lookupMaybe(name('S'), PDFName)?.decodeText() === 'GTS_PDFA1' &&
      intent.lookup(name('DestOutputProfile')) instanceof PDFRawStream
    );
  });
  if (!ok) add('PDFA-OUTPUT-INTENT', 'no GTS_PDFA1 OutputIntent with an embedded ICC profile');
}

function checkFont(font: PDFDict, add: (rule: PdfARule, message: string) => void): void {
  const subtype = font.lookupMaybe(name('Subtype'), PDFName)?.decodeText();
  if (subtype === 'Type3' || subtype === 'Type0') return; // Type3 glyphs are content; Type0's descendant is checked as its own Font object
  const descriptor = font.lookupMaybe(name('FontDescriptor'), PDFDict);
  if (!descriptor || !FONT_FILES.some((key) => descriptor.has(key))) {
    add(
      'PDFA-FONTS-EMBEDDED',
      `font ${font.lookupMaybe(name('BaseFont'), PDFName)?.decodeText() ?? 'unnamed'} is not embedded`,
    );
  }
}

function checkAttachments(
  catalog: PDFDict,
  specs: PDFDict[],
  part: number,
  add: (rule: PdfARule, message: string) => void,
): void {
  if (specs.length === 0) return;
  if (part !== 3) {
    add('PDFA-ATTACHMENTS', `PDF/A-${part} output must carry no attachments`);
    return;
  }
  const associated = new Set<PDFObject>(
    (catalog.lookupMaybe(name('AF'), PDFArray)?.asArray() ?? []).map((ref) => catalog.context.lookup(ref) as PDFObject),
  );
  for (const spec of specs) {
    const uf = spec.lookup(name('UF'));
    const label = uf instanceof PDFHexString || uf instanceof PDFString ? uf.decodeText() : 'an attachment';
    if (!spec.has(name('AFRelationship'))) add('PDFA-ATTACHMENTS', `${label} has no /AFRelationship`);
    if (!associated.has(spec)) add('PDFA-ATTACHMENTS', `${label} is not listed in the catalog's /AF`);
    const stream = spec.lookupMaybe(name('EF'), PDFDict)?.lookup(name('F'));
    if (!(stream instanceof PDFRawStream) || !stream.dict.has(name('Subtype')))
      add('PDFA-ATTACHMENTS', `${label} has no MIME type (/Subtype)`);
  }
}
