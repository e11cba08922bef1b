/** Several result files as one zip (yazl, written as a stream and gathered): the `zip` answer of split. */
import { ZipFile } from 'yazl';
import { uniqueNames } from '../batches/unique-names.js';

/**
 * A zip of `files`, stored without compression: PDFs are deflated inside already. Entry names are
 * unique whatever their case (two ranges may name the same pages): a later one gets `-part-<n>`.
 */
export async function zipParts(files: { name: string; bytes: Buffer }[]): Promise<Buffer> {
  const zip = new ZipFile();
  const names = uniqueNames(files.map((file, i) => ({ name: file.name, tag: `part-${i + 1}` })));
  files.forEach((file, i) => zip.addBuffer(file.bytes, names[i]!, { compress: false, mtime: new Date() }));
  zip.end();
  const chunks: Buffer[] = [];
  for await (const chunk of zip.outputStream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
