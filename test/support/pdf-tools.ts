/** Reads PDFs the way a user would check them: poppler's pdftotext and pdfinfo, qpdf. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function withFile<T>(pdf: Buffer, work: (path: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'pressroom-pdf-'));
  const path = join(dir, 'doc.pdf');
  writeFileSync(path, pdf);
  try {
    return work(path);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The document's text, in reading order (pdftotext -layout off). */
export function pdfText(pdf: Buffer): string {
  return withFile(pdf, (path) => execFileSync('pdftotext', ['-enc', 'UTF-8', path, '-'], { encoding: 'utf8' }));
}

/** `pdfinfo` fields as a map (Pages, Page size, Tagged, PDF version…). */
export function pdfInfo(pdf: Buffer, extra: string[] = []): Record<string, string> {
  const out = withFile(pdf, (path) => execFileSync('pdfinfo', [...extra, path], { encoding: 'utf8' }));
  return Object.fromEntries(out.split('\n').filter((l) => l.includes(':')).map((l) => [l.slice(0, l.indexOf(':')).trim(), l.slice(l.indexOf(':') + 1).trim()]));
}

export function pdfPages(pdf: Buffer): number {
  return Number(pdfInfo(pdf).Pages);
}

/** The text of one page (1-based). */
export function pdfPageText(pdf: Buffer, page: number): string {
  return withFile(pdf, (path) => execFileSync('pdftotext', ['-enc', 'UTF-8', '-f', String(page), '-l', String(page), path, '-'], { encoding: 'utf8' }));
}

/** The XMP metadata packet (pdfinfo -meta). */
export function pdfXmp(pdf: Buffer): string {
  return withFile(pdf, (path) => execFileSync('pdfinfo', ['-meta', path], { encoding: 'utf8' }));
}
