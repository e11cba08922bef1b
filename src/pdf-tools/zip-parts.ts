/** Several result files as one zip (yazl, written as a stream and gathered): the `zip` answer of split. */
import { ZipFile } from 'yazl';

/** A zip of `files`, stored without compression: PDFs are deflated inside already. */
export async function zipParts(files: { name: string; bytes: Buffer }[]): Promise<Buffer> {
  const zip = new ZipFile();
  for (const file of files) zip.addBuffer(file.bytes, file.name, { compress: false, mtime: new Date() });
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
