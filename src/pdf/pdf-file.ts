/**
 * A PDF in a file on local disk — a long one, spilled to the spool as Chromium streams it
 * (`PdfRenderer.renderSpilling`) — and how the rendering steps read it: at offsets (`pdf-xref.ts`), or whole
 * where a step needs all of it (pdf-lib's fallbacks, the preview stamp).
 */
import { openSync, closeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileBytes, type PdfBytes } from './pdf-xref.js';

/** A PDF in a file: where it is and how many bytes it holds. */
export interface PdfFile {
  readonly path: string;
  readonly size: number;
}

/** A printed PDF: in memory, or (long) in a file. */
export type PrintedPdf = Buffer | PdfFile;

/** The whole PDF in memory (a file read once). */
export async function pdfBuffer(pdf: PrintedPdf): Promise<Buffer> {
  return Buffer.isBuffer(pdf) ? pdf : readFile(pdf.path);
}

/** Runs `read` on the file's bytes read at offsets; the file is open only meanwhile. */
export function readFileAt<T>(file: PdfFile, read: (bytes: PdfBytes) => T): T {
  const fd = openSync(file.path, 'r');
  try {
    return read(fileBytes(fd, file.size));
  } finally {
    closeSync(fd);
  }
}
