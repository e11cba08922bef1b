/**
 * What a merge of tagged PDFs (merge-tagged.ts) carries into its catalog besides the structure tree:
 * the form fields, as qpdf's merge keeps them, and the PDF/UA claim with a title when every input makes it.
 */
import {
  PDFArray,
  PDFDict,
  type PDFDocument,
  PDFHexString,
  PDFName,
  type PDFObject,
  type PDFObjectCopier,
  PDFRawStream,
  PDFString,
} from '@cantoo/pdf-lib';
import { inflateSync } from 'node:zlib';

const N = (n: string) => PDFName.of(n);
const text = (o: PDFObject | undefined) =>
  o instanceof PDFString || o instanceof PDFHexString ? o.decodeText().trim() || undefined : undefined;
/** An XMP packet read at most: a small stream may inflate to gigabytes. */
const MAX_XMP_BYTES = 4 << 20;

/** The merged form: the first input's defaults (/DA, /DR…), every input's fields, their names so far. */
export interface MergedForm {
  form?: PDFDict;
  names: Set<string>;
}

/**
 * The input's top-level fields with a widget on one of its pages (`annots`: theirs, as the input has
 * them), copied by the copier that copied the pages: qpdf keeps these and drops the others (an
 * invisible signature among them), and gives a clashing name `+n`, as here.
 */
export function carryFields(
  input: { src: PDFDocument; copier: PDFObjectCopier; annots: Set<PDFObject> },
  into: PDFDocument,
  merged: MergedForm,
): void {
  const { src, copier, annots } = input;
  const form = src.catalog.lookup(N('AcroForm'));
  const fields = form instanceof PDFDict ? form.lookup(N('Fields')) : undefined;
  if (!(form instanceof PDFDict) || !(fields instanceof PDFArray)) return;
  if (!merged.form) {
    merged.form = into.context.obj({ Fields: [] });
    for (const [k, v] of form.entries()) if (k !== N('Fields')) merged.form.set(k, copier.copy(v));
  }
  const onPage = (field: PDFObject | undefined, depth: number): boolean => {
    if (!(field instanceof PDFDict)) return false;
    if (annots.has(field)) return true;
    const kids = field.lookup(N('Kids'));
    return (
      depth < 32 && kids instanceof PDFArray && kids.asArray().some((k) => onPage(src.context.lookup(k), depth + 1))
    );
  };
  for (const ref of fields.asArray()) {
    if (!onPage(src.context.lookup(ref), 0)) continue;
    const copied = copier.copy(ref);
    const field = into.context.lookup(copied);
    const own = field instanceof PDFDict ? text(field.lookup(N('T'))) : undefined;
    if (field instanceof PDFDict && own !== undefined) {
      let name = own;
      for (let n = 1; merged.names.has(name); n++) name = `${own}+${n}`;
      if (name !== own) field.set(N('T'), PDFHexString.fromText(name));
      merged.names.add(name);
    }
    merged.form.lookup(N('Fields'), PDFArray).push(copied);
  }
}

/** In the catalog, when the form has a field. */
export function setForm(doc: PDFDocument, merged: MergedForm): void {
  if (merged.form && merged.form.lookup(N('Fields'), PDFArray).size() > 0)
    doc.catalog.set(N('AcroForm'), doc.context.register(merged.form));
}

/** Whether the input's XMP claims PDF/UA-1, and its title (the document info's, else the XMP's dc:title). */
export function pdfUaClaim(doc: PDFDocument): { title?: string } | undefined {
  const xmp = xmpText(doc.catalog.lookup(N('Metadata')));
  if (!xmp || !/pdfuaid:part(?:>|=["'])1/.test(xmp)) return undefined;
  const info = doc.context.lookup(doc.context.trailerInfo.Info);
  const li = /<dc:title>[\s\S]*?<rdf:li[^>]*>([^<]*)<\/rdf:li>/.exec(xmp)?.[1]?.trim();
  const entities: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&apos;': "'" };
  const title =
    (info instanceof PDFDict ? text(info.lookup(N('Title'))) : undefined) ??
    li?.replace(/&(?:amp|lt|gt|quot|apos);/g, (e) => entities[e]!);
  return { title: title || undefined };
}

/** The merged file's own XMP and document title: the PDF/UA identifier, not PDF/A's (the merge is not checked for it). */
export function claimPdfUa(doc: PDFDocument, title: string): void {
  const escaped = title.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
  const xmp = `<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:format>application/pdf</dc:format>
<dc:title><rdf:Alt><rdf:li xml:lang="x-default">${escaped}</rdf:li></rdf:Alt></dc:title></rdf:Description>
<rdf:Description rdf:about="" xmlns:pdfuaid="http://www.aiim.org/pdfua/ns/id/"><pdfuaid:part>1</pdfuaid:part></rdf:Description>
</rdf:RDF></x:xmpmeta>
<?xpacket end="w"?>`;
  doc.setTitle(title);
  const stream = doc.context.stream(Buffer.from(xmp, 'utf8'), { Type: 'Metadata', Subtype: 'XML' });
  doc.catalog.set(N('Metadata'), doc.context.register(stream));
}

/** The XMP packet's text: uncompressed, or deflated within MAX_XMP_BYTES; otherwise none. */
function xmpText(stream: PDFObject | undefined): string | undefined {
  if (!(stream instanceof PDFRawStream)) return undefined;
  const filter = stream.dict.lookup(N('Filter'));
  try {
    if (filter === undefined) return Buffer.from(stream.contents).toString('utf8');
    if (filter === N('FlateDecode'))
      return inflateSync(stream.contents, { maxOutputLength: MAX_XMP_BYTES }).toString('utf8');
  } catch {
    // Past the bound, or not deflate data: no claim read.
  }
  return undefined;
}
