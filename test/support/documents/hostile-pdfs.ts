/**
 * PDFs built to make a reader allocate far more than their size (issue 37), written here byte by byte
 * so no binary file is committed. Each has one page, object 3, and puts its costly object in a Flate
 * object stream found through a cross-reference stream: a reader must inflate and parse it.
 */
import { deflateSync } from 'node:zlib';
import { PDFDocument, PDFHexString, PDFName, PDFString } from '@cantoo/pdf-lib';

const PAGE = '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 400] >>';

/**
 * A direct array of `count` integers (`[0 0 0 …]`): 10,000,000 of them deflate to ~20 KB, and qpdf,
 * which makes an object of each, asked for 2.6 GB to read them. `in: 'page'` puts the array in the
 * page (read to count the pages); `in: 'catalog'` in an object of its own that only the catalog names
 * (read when the whole document is written, as a rotation does, not to count the pages).
 */
export function numberArrayPdf(count: number, options: { in: 'page' | 'catalog' }): Buffer {
  const numbers = `[${'0 '.repeat(count)}]`;
  if (options.in === 'page')
    return onePagePdf(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 400] /Filler ${numbers} >>`);
  return onePagePdf(PAGE, { catalogFiller: numbers });
}

/** The page's object stream inflates to the page and `padding` spaces after it: a compression bomb (400 MB in 390 KB). */
export function inflatingPdf(padding: number): Buffer {
  return onePagePdf(Buffer.concat([Buffer.from(PAGE, 'latin1'), Buffer.alloc(padding, ' ')]));
}

/**
 * A one-page PDF 1.5: catalog 1, pages 2, the page 3 (`page`) alone in object stream 4; with a
 * `catalogFiller`, that object is 6, named by the catalog's /Filler, alone in object stream 7.
 */
function onePagePdf(page: string | Buffer, options: { catalogFiller?: string } = {}): Buffer {
  const parts: Buffer[] = [];
  const offsets = new Map<number, number>();
  let length = 0;
  const add = (chunk: string | Buffer) => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'latin1') : chunk;
    parts.push(bytes);
    length += bytes.length;
  };
  const object = (number: number, body: string) => {
    offsets.set(number, length);
    add(`${number} 0 obj\n${body}\nendobj\n`);
  };
  const objectStream = (number: number, member: number, body: string | Buffer) => {
    const header = `${member} 0 `;
    const packed = deflateSync(
      Buffer.concat([Buffer.from(header, 'latin1'), typeof body === 'string' ? Buffer.from(body, 'latin1') : body]),
      { level: 9 },
    );
    offsets.set(number, length);
    add(
      `${number} 0 obj\n<< /Type /ObjStm /N 1 /First ${header.length} /Filter /FlateDecode /Length ${packed.length} >>\nstream\n`,
    );
    add(packed);
    add('\nendstream\nendobj\n');
  };
  add('%PDF-1.5\n%\xe2\xe3\xcf\xd3\n');
  object(1, `<< /Type /Catalog /Pages 2 0 R${options.catalogFiller === undefined ? '' : ' /Filler 6 0 R'} >>`);
  object(2, '<< /Type /Pages /Kids [3 0 R] /Count 1 >>');
  objectStream(4, 3, page);
  if (options.catalogFiller !== undefined) objectStream(7, 6, options.catalogFiller);
  const xrefNumber = options.catalogFiller === undefined ? 5 : 8;
  offsets.set(xrefNumber, length);
  // Entries of 1 + 4 + 2 bytes: type (0 free, 1 at an offset, 2 in an object stream), offset or stream number, generation or index.
  const entry = (number: number) => {
    const row = Buffer.alloc(7);
    const inStream = number === 3 ? 4 : number === 6 ? 7 : undefined;
    if (number === 0) {
      row.writeUInt16BE(65535, 5);
    } else if (inStream !== undefined) {
      row[0] = 2;
      row.writeUInt32BE(inStream, 1);
    } else if (offsets.has(number)) {
      row[0] = 1;
      row.writeUInt32BE(offsets.get(number)!, 1);
    }
    return row;
  };
  const xref = Buffer.concat(Array.from({ length: xrefNumber + 1 }, (_, n) => entry(n)));
  add(
    `${xrefNumber} 0 obj\n<< /Type /XRef /Size ${xrefNumber + 1} /W [1 4 2] /Root 1 0 R /Length ${xref.length} >>\nstream\n`,
  );
  add(xref);
  add(`\nendstream\nendobj\nstartxref\n${offsets.get(xrefNumber)}\n%%EOF\n`);
  return Buffer.concat(parts);
}

/**
 * A one-page PDF whose form has `fields` signature fields that all name one signature of
 * `contentsBytes` bytes (issue 49): `pdfsig -dump` wrote the one `/Contents` once per field, 300 × 1 MB
 * to disk for a 2.7 MB upload. Built with @cantoo/pdf-lib; the signature is not a valid CMS (it need not be).
 */
export async function sharedSignaturePdf(fields: number, contentsBytes: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([300, 400]);
  const { context } = doc;
  const signature = context.register(
    context.obj({
      Type: 'Sig',
      Filter: 'Adobe.PPKLite',
      SubFilter: 'adbe.pkcs7.detached',
      ByteRange: [0, 0, 0, 0],
      Contents: PDFHexString.of('30'.repeat(contentsBytes)),
    }),
  );
  const widgets = Array.from({ length: fields }, (_, i) =>
    context.register(
      context.obj({
        Type: 'Annot',
        Subtype: 'Widget',
        FT: 'Sig',
        T: PDFString.of(`Signature${i + 1}`),
        V: signature,
        Rect: [0, 0, 0, 0],
        F: 132,
        P: page.ref,
      }),
    ),
  );
  page.node.set(PDFName.of('Annots'), context.obj(widgets));
  doc.catalog.set(PDFName.of('AcroForm'), context.obj({ Fields: widgets, SigFlags: 3 }));
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}
