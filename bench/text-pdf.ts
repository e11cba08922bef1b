/** A PDF of `pages` pages of plain text (50 lines each): the long documents the PDF-work benches use. */
import { PDFDocument, StandardFonts } from '@cantoo/pdf-lib';

export async function textPdf(pages: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 0; i < pages; i++) {
    const page = doc.addPage();
    for (let l = 0; l < 50; l++)
      page.drawText(`Page ${i + 1} line ${l}: lorem ipsum dolor sit amet, consectetur adipiscing elit`, {
        x: 40,
        y: 780 - l * 15,
        size: 10,
        font,
      });
  }
  return Buffer.from(await doc.save());
}
