/**
 * Merge that keeps the tags (POST /v1/pdf-tools/merge when an input is tagged; qpdf's `--empty --pages`
 * drops every structure tree), run on an accessibility thread: pdf-lib parses whole files. Per input one
 * PDFObjectCopier copies its pages, then its structure elements, so every /Pg, MCR and OBJR lands on the
 * copied page; /StructParents and /StructParent keys move by a running offset into one /ParentTree. The
 * tree: StructTreeRoot → one Document → each tagged input's top-level elements in order (an input's own
 * Document becomes a Part, keeping its /Lang). Untagged inputs' pages are copied outside the tree. As
 * qpdf's merge: no outline, names or document info; form fields are kept, and when every input claims
 * PDF/UA so does the result (merged-catalog.ts). The inputs come without object streams (qpdf unpacked
 * them under its ceilings: pdf-lib inflates them without a bound).
 */
import {
  PDFArray,
  PDFBool,
  PDFDict,
  PDFDocument,
  PDFHexString,
  PDFName,
  PDFNumber,
  type PDFObject,
  PDFObjectCopier,
  PDFPage,
  type PDFPageLeaf,
  PDFRef,
  PDFStream,
  PDFString,
} from '@cantoo/pdf-lib';
import { compactPdf } from '../finishing/pdf-compaction.js';
import { carryFields, claimPdfUa, type MergedForm, pdfUaClaim, setForm } from './merged-catalog.js';

const N = (n: string) => PDFName.of(n);
type Text = PDFString | PDFHexString;
const isText = (o: unknown): o is Text => o instanceof PDFString || o instanceof PDFHexString;
/** Structure elements walked at most per input, as the check (pdf-ua.ts) bounds its walk. */
const MAX_STRUCT_NODES = 2_000_000;

/** What the merged document gathers from its inputs, in order. */
interface Merge {
  doc: PDFDocument;
  documentRef: PDFRef;
  kids: PDFArray;
  nums: PDFObject[];
  ids: [Uint8Array, PDFObject, PDFRef][];
  /** The inputs' custom types and attribute classes, the first input's meaning winning a clash. */
  maps: Record<'RoleMap' | 'ClassMap', PDFDict>;
  offset: number;
  /** An input was tagged (a structure tree, /MarkInfo /Marked true). */
  tagged: boolean;
  lang?: Text;
  displayDocTitle?: PDFBool;
  form: MergedForm;
  /** Each input that claims PDF/UA, with its title. */
  claims: { title?: string }[];
}

/** The inputs' pages one after another, their structure trees as one (module comment); null when none is tagged. */
export async function mergeTagged(pdfs: Uint8Array[]): Promise<Uint8Array | null> {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const { context } = doc;
  const m: Merge = {
    doc,
    documentRef: context.nextRef(),
    kids: context.obj([]),
    nums: [],
    ids: [],
    maps: { RoleMap: context.obj({}), ClassMap: context.obj({}) },
    offset: 0,
    tagged: false,
    form: { names: new Set() },
    claims: [],
  };
  // One input parsed at a time: each source document is garbage once its objects are copied.
  // parseSpeed and objectsPerTick Infinity: on its own thread there is no event loop to yield to (pdf-lib
  // waits a timer tick every 100 objects parsed and every 50 written by default).
  for (const [index, pdf] of pdfs.entries())
    addInput(await PDFDocument.load(pdf, { updateMetadata: false, parseSpeed: Number.POSITIVE_INFINITY }), index, m);
  if (!m.tagged) return null;
  const { catalog } = doc;
  // Name trees are sorted by their keys' bytes.
  const ids = m.ids.sort((a, b) => Buffer.compare(a[0], b[0])).flatMap(([, id, ref]) => [id, ref]);
  const root = context.obj({
    Type: 'StructTreeRoot',
    K: m.documentRef,
    ParentTree: context.register(context.obj({ Nums: m.nums })),
    ParentTreeNextKey: m.offset,
    ...(ids.length > 0 ? { IDTree: context.register(context.obj({ Names: ids })) } : {}),
    ...Object.fromEntries(Object.entries(m.maps).filter(([, map]) => map.keys().length > 0)),
  });
  const rootRef = context.register(root);
  context.assign(m.documentRef, context.obj({ Type: 'StructElem', S: 'Document', P: rootRef, K: m.kids }));
  catalog.set(N('StructTreeRoot'), rootRef);
  catalog.set(N('MarkInfo'), context.obj({ Marked: true }));
  if (m.lang) catalog.set(N('Lang'), m.lang);
  if (m.displayDocTitle) catalog.set(N('ViewerPreferences'), context.obj({ DisplayDocTitle: m.displayDocTitle }));
  setForm(doc, m.form);
  const title = m.claims[0]?.title;
  if (m.claims.length === pdfs.length && title !== undefined) claimPdfUa(doc, title);
  const saved = await doc.save({
    useObjectStreams: false,
    addDefaultPage: false,
    updateFieldAppearances: false,
    objectsPerTick: Number.POSITIVE_INFINITY,
  });
  // Packed as every PDF the service makes (compaction parses nothing): the tree's small objects shrink fivefold.
  return compactPdf(Buffer.from(saved.buffer, saved.byteOffset, saved.byteLength)).pdf;
}

function addInput(src: PDFDocument, index: number, m: Merge): void {
  const copier = PDFObjectCopier.for(src.context, m.doc.context);
  const { catalog } = src;
  const root = catalog.lookup(N('StructTreeRoot'));
  const markInfo = catalog.lookup(N('MarkInfo'));
  const flag = markInfo instanceof PDFDict ? markInfo.lookup(N('Marked')) : undefined;
  const marked = flag instanceof PDFBool && flag.asBoolean();
  const tree = root instanceof PDFDict && marked ? root : undefined;
  const tops = tree ? list(tree.get(N('K'))) : [];
  // Detached first: copying the kids' /P would copy the old root, its ParentTree and IDTree along.
  for (const top of tops) {
    const element = src.context.lookup(top);
    if (element instanceof PDFDict) element.delete(N('P'));
  }
  const rootRef = catalog.get(N('StructTreeRoot'));
  if (rootRef instanceof PDFRef) src.context.assign(rootRef, src.context.obj({}));

  let highest = -1;
  const moved = new Set<PDFDict>();
  const renumber = (dict: PDFDict | undefined, key: string) => {
    const n = dict?.get(N(key));
    if (!dict || !(n instanceof PDFNumber) || moved.has(dict)) return;
    moved.add(dict);
    // An untagged input's keys point into no tree of the result.
    if (!tree) return void dict.delete(N(key));
    highest = Math.max(highest, n.asNumber());
    dict.set(N(key), PDFNumber.of(n.asNumber() + m.offset));
  };
  const srcAnnots = new Set<PDFObject>();
  for (const page of src.getPages()) {
    const ref = copier.copy(page.ref);
    const leaf = m.doc.context.lookup(ref) as PDFPageLeaf;
    m.doc.addPage(PDFPage.of(leaf, ref, m.doc));
    renumber(leaf, 'StructParents');
    for (const a of page.node.Annots()?.asArray() ?? []) srcAnnots.add(src.context.lookup(a)!);
    for (const a of leaf.Annots()?.asArray() ?? []) renumber(m.doc.context.lookup(a) as PDFDict, 'StructParent');
    const xobjects = leaf.Resources()?.lookup(N('XObject'));
    for (const [, x] of xobjects instanceof PDFDict ? xobjects.entries() : []) {
      const stream = m.doc.context.lookup(x);
      if (stream instanceof PDFStream) for (const key of ['StructParents', 'StructParent']) renumber(stream.dict, key);
    }
  }

  const lang = catalog.lookup(N('Lang'));
  if (isText(lang) && !m.lang) m.lang = lang;
  const prefs = catalog.lookup(N('ViewerPreferences'));
  const display = prefs instanceof PDFDict ? prefs.lookup(N('DisplayDocTitle')) : undefined;
  if (display instanceof PDFBool && !m.displayDocTitle) m.displayDocTitle = display;
  carryFields({ src, copier, annots: srcAnnots }, m.doc, m.form);
  const claim = pdfUaClaim(src);
  if (claim) m.claims.push(claim);
  if (!tree) return;
  m.tagged = true;

  const ownLang = isText(lang) && lang.decodeText().toLowerCase() !== m.lang?.decodeText().toLowerCase();
  for (const top of tops) {
    const copied = copier.copy(top);
    const element = m.doc.context.lookup(copied);
    if (element instanceof PDFDict) {
      element.set(N('P'), m.documentRef);
      if (element.get(N('S')) === N('Document')) element.set(N('S'), N('Part'));
      if (ownLang && !element.has(N('Lang'))) element.set(N('Lang'), lang);
    }
    m.kids.push(copied);
  }
  const entries = numberTree(tree.lookup(N('ParentTree')));
  for (const [key, value] of entries.sort((a, b) => num(a[0]) - num(b[0]))) {
    m.nums.push(PDFNumber.of(num(key) + m.offset), copier.copy(value));
    highest = Math.max(highest, num(key));
  }
  const next = tree.lookup(N('ParentTreeNextKey'));
  m.offset += Math.max(highest + 1, next instanceof PDFNumber ? next.asNumber() : 0);
  for (const [key, into] of Object.entries(m.maps)) {
    const from = tree.lookup(N(key));
    for (const [k, v] of from instanceof PDFDict ? from.entries() : []) if (!into.has(k)) into.set(k, copier.copy(v));
  }
  collectIds(m, tops.map(copier.copy), index);
}

/** Element IDs into the merged IDTree; after the first input, each ID and the /Headers naming it get `~n`. */
function collectIds(m: Merge, tops: PDFObject[], index: number): void {
  const context = m.doc.context;
  const rename = (id: Text) =>
    index === 0 ? id : PDFHexString.of(Buffer.concat([id.asBytes(), Buffer.from(`~${index + 1}`)]).toString('hex'));
  const stack: [PDFObject, PDFRef | undefined][] = tops.map((t) => [t, undefined]);
  const seen = new Set<PDFObject>();
  for (let nodes = 0; stack.length > 0 && nodes < MAX_STRUCT_NODES; ) {
    const [item, ref] = stack.pop()!;
    if (item instanceof PDFRef) {
      if (!seen.has(item)) stack.push([context.lookup(item)!, item]);
      seen.add(item);
      continue;
    }
    if (item instanceof PDFArray) for (const kid of item.asArray()) stack.push([kid, undefined]);
    if (!(item instanceof PDFDict) || item.has(N('Obj')) || item.lookup(N('Type')) === N('MCR')) continue;
    nodes++;
    const id = item.lookup(N('ID'));
    if (isText(id)) {
      const renamed = rename(id);
      item.set(N('ID'), renamed);
      if (ref) m.ids.push([renamed.asBytes(), renamed, ref]);
    }
    for (const attr of index > 0 ? list(item.get(N('A'))).map((a) => context.lookup(a)) : []) {
      const headers = attr instanceof PDFDict ? attr.lookup(N('Headers')) : undefined;
      if (headers instanceof PDFArray) headers.asArray().forEach((h, i) => isText(h) && headers.set(i, rename(h)));
    }
    const kids = item.get(N('K'));
    if (kids) stack.push([kids, undefined]);
  }
}

/** A number tree's `[key, value]` pairs, each node read once (a loop in /Kids ends there). */
function numberTree(node: PDFObject | undefined): [PDFObject, PDFObject][] {
  const out: [PDFObject, PDFObject][] = [];
  const stack = [node];
  const seen = new Set<PDFObject>();
  while (stack.length > 0) {
    const at = stack.pop();
    if (!(at instanceof PDFDict) || seen.has(at)) continue;
    seen.add(at);
    const pairs = at.lookup(N('Nums'));
    if (pairs instanceof PDFArray)
      for (let i = 0; i + 1 < pairs.size(); i += 2) out.push([pairs.lookup(i)!, pairs.get(i + 1)]);
    const kids = at.lookup(N('Kids'));
    if (kids instanceof PDFArray) for (let i = kids.size() - 1; i >= 0; i--) stack.push(kids.lookup(i));
  }
  return out;
}

const num = (o: PDFObject) => (o instanceof PDFNumber ? o.asNumber() : -1);
const list = (o: PDFObject | undefined): PDFObject[] => (o instanceof PDFArray ? o.asArray() : o ? [o] : []);
