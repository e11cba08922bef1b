/**
 * The PDF/A check (pdfa-check.ts): a file toPdfA made passes it, and for each rule a copy of that file
 * altered to break it (with pdf-lib) fails with that rule's id and no other.
 */
import { PDFArray, PDFDict, PDFDocument, PDFName, PDFRawStream, StandardFonts, rgb } from 'pdf-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { checkPdfA, type PdfARule } from './pdfa-check.js';
import { toPdfA } from './pdfa.js';

const XML = Buffer.from('<?xml version="1.0"?><invoice/>', 'utf8');
let base3b: Buffer;
let bare3b: Buffer;

/** A one-page PDF with only vector content, made archival by the service's own toPdfA. */
async function archival(attach: boolean): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc.addPage([200, 200]).drawRectangle({ x: 20, y: 20, width: 100, height: 50, color: rgb(0.1, 0.4, 0.6) });
  const pdf = Buffer.from(await doc.save());
  return toPdfA(
    pdf,
    'pdf/a-3b',
    attach
      ? {
          attachments: [
            {
              name: 'factur-x.xml',
              bytes: XML,
              mimeType: 'text/xml',
              description: 'Invoice',
              relationship: 'Alternative',
            },
          ],
        }
      : {},
  );
}

/** `base3b`, changed by `edit`, saved again. */
async function broken(edit: (doc: PDFDocument) => unknown, from = base3b): Promise<Uint8Array> {
  const doc = await PDFDocument.load(from, { updateMetadata: false });
  await edit(doc);
  return doc.save({ useObjectStreams: false, addDefaultPage: false });
}

const rules = async (pdf: Uint8Array, part: 1 | 2 | 3 = 3): Promise<PdfARule[]> => [
  ...new Set((await checkPdfA(pdf, part)).map((f) => f.rule)),
];
const name = (n: string) => PDFName.of(n);

describe('checkPdfA', () => {
  beforeAll(async () => {
    base3b = await archival(true);
    bare3b = await archival(false);
  });

  it('passes what toPdfA makes, with and without an attachment', async () => {
    expect(await checkPdfA(base3b, 3)).toEqual([]);
    expect(await checkPdfA(bare3b, 3)).toEqual([]);
  });

  it.each<{ rule: PdfARule; how: string; part?: 1 | 2 | 3; bare?: boolean; edit?: (doc: PDFDocument) => unknown }>([
    { rule: 'PDFA-XMP-ID', how: 'checked as PDF/A-2 while the XMP says part 3', part: 2, bare: true },
    {
      rule: 'PDFA-XMP-ID',
      how: 'XMP without pdfaid',
      edit: (doc) => {
        doc.catalog.set(
          name('Metadata'),
          doc.context.register(
            doc.context.stream('<x:xmpmeta xmlns:x="adobe:ns:meta/"/>', { Type: 'Metadata', Subtype: 'XML' }),
          ),
        );
      },
    },
    {
      rule: 'PDFA-OUTPUT-INTENT',
      how: 'OutputIntents removed',
      edit: (doc) => doc.catalog.delete(name('OutputIntents')),
    },
    {
      rule: 'PDFA-OUTPUT-INTENT',
      how: 'an OutputIntent without its ICC profile',
      edit: (doc) =>
        doc.catalog.lookup(name('OutputIntents'), PDFArray).lookup(0, PDFDict).delete(name('DestOutputProfile')),
    },
    {
      rule: 'PDFA-FONTS-EMBEDDED',
      how: 'text in standard Helvetica (not embedded)',
      edit: async (doc) => {
        doc.getPage(0).drawText('x', { font: await doc.embedFont(StandardFonts.Helvetica) });
      },
    },
    {
      rule: 'PDFA-NO-ENCRYPTION',
      how: 'an /Encrypt entry in the trailer',
      edit: (doc) => {
        doc.context.trailerInfo.Encrypt = doc.context.obj({ Filter: 'Standard', V: 2 });
      },
    },
    {
      rule: 'PDFA-NO-JAVASCRIPT',
      how: 'a JavaScript OpenAction',
      edit: (doc) => doc.catalog.set(name('OpenAction'), doc.context.obj({ S: 'JavaScript', JS: 'app.alert(1)' })),
    },
    {
      rule: 'PDFA-DOCUMENT-ID',
      how: 'the trailer /ID removed',
      edit: (doc) => {
        doc.context.trailerInfo.ID = undefined;
      },
    },
    { rule: 'PDFA-ATTACHMENTS', how: 'the catalog /AF removed', edit: (doc) => doc.catalog.delete(name('AF')) },
    {
      rule: 'PDFA-ATTACHMENTS',
      how: 'the MIME type removed',
      edit: (doc) => {
        for (const [, object] of doc.context.enumerateIndirectObjects())
          if (object instanceof PDFRawStream && object.dict.get(name('Type')) === name('EmbeddedFile'))
            object.dict.delete(name('Subtype'));
      },
    },
    {
      rule: 'PDFA-ATTACHMENTS',
      how: 'the /AFRelationship removed',
      edit: (doc) => doc.catalog.lookup(name('AF'), PDFArray).lookup(0, PDFDict).delete(name('AFRelationship')),
    },
  ])('$rule fails on a file with $how', async ({ rule, part, bare, edit }) => {
    const pdf = await broken(edit ?? (() => undefined), bare ? bare3b : base3b);
    expect(await rules(pdf, part ?? 3)).toEqual([rule]);
  });

  it('PDFA-ATTACHMENTS fails on an attachment in a PDF/A-2 file', async () => {
    const doc = await PDFDocument.load(base3b, { updateMetadata: false });
    const xmp = doc.catalog.lookup(name('Metadata'));
    if (!(xmp instanceof PDFRawStream)) throw new Error('no XMP');
    const text = Buffer.from(xmp.contents).toString('utf8').replace('<pdfaid:part>3<', '<pdfaid:part>2<');
    doc.catalog.set(
      name('Metadata'),
      doc.context.register(doc.context.stream(text, { Type: 'Metadata', Subtype: 'XML' })),
    );
    expect(await rules(await doc.save({ useObjectStreams: false }), 2)).toEqual(['PDFA-ATTACHMENTS']);
  });
});
