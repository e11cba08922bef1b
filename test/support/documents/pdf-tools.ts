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

/** The document's text (or one page's) as pdftotext extracts it; `raw` keeps content-stream order. */
export function pdfText(pdf: Buffer, options: { page?: number; raw?: boolean; layout?: boolean } = {}): string {
  const flags = ['-enc', 'UTF-8', ...(options.raw ? ['-raw'] : []), ...(options.layout ? ['-layout'] : [])];
  if (options.page !== undefined) flags.push('-f', String(options.page), '-l', String(options.page));
  // maxBuffer: a 300-page document's text is several MB, past execFileSync's 1 MB default.
  return withFile(pdf, (path) =>
    execFileSync('pdftotext', [...flags, path, '-'], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 }),
  );
}

/** Output of a poppler tool (`pdffonts`, `pdfimages -list`, …) run on the PDF. */
export function pdfTool(tool: string, pdf: Buffer, args: string[] = []): string {
  return withFile(pdf, (path) => execFileSync(tool, [...args, path], { encoding: 'utf8' }));
}

/**
 * Every byte of the file as a reader sees it: object streams unpacked and stream data decompressed
 * (qpdf), so a search for a string cannot miss it because compaction packed it away.
 */
export function pdfExpandedBytes(pdf: Buffer): string {
  return withFile(pdf, (path) =>
    execFileSync('qpdf', ['--object-streams=disable', '--stream-data=uncompress', '--decode-level=all', path, '-'], {
      maxBuffer: 512 * 1024 * 1024,
    }).toString('latin1'),
  );
}

/** The document outline (bookmarks) titles, via qpdf's JSON view. */
export function pdfOutlineTitles(pdf: Buffer): string[] {
  const json = withFile(pdf, (path) =>
    execFileSync('qpdf', ['--json', '--json-key=outlines', path], { encoding: 'utf8' }),
  );
  const titles: string[] = [];
  const walk = (items: { title: string; kids?: unknown[] }[]) => {
    for (const item of items) {
      titles.push(item.title);
      walk((item.kids ?? []) as { title: string; kids?: unknown[] }[]);
    }
  };
  walk((JSON.parse(json) as { outlines: { title: string }[] }).outlines);
  return titles;
}

/** `pdfinfo` fields as a map (Pages, Page size, Tagged, PDF version…). */
export function pdfInfo(pdf: Buffer, extra: string[] = []): Record<string, string> {
  const out = withFile(pdf, (path) => execFileSync('pdfinfo', [...extra, path], { encoding: 'utf8' }));
  return Object.fromEntries(
    out
      .split('\n')
      .filter((l) => l.includes(':'))
      .map((l) => [l.slice(0, l.indexOf(':')).trim(), l.slice(l.indexOf(':') + 1).trim()]),
  );
}

export function pdfPages(pdf: Buffer): number {
  return Number(pdfInfo(pdf).Pages);
}

/** The text of one page (1-based). */
export function pdfPageText(pdf: Buffer, page: number): string {
  return pdfText(pdf, { page });
}

/** The XMP metadata packet (pdfinfo -meta). */
export function pdfXmp(pdf: Buffer): string {
  return withFile(pdf, (path) => execFileSync('pdfinfo', ['-meta', path], { encoding: 'utf8' }));
}

/** One page (1-based) rendered by poppler's pdftoppm at `dpi`, as 8-bit RGB pixels (pdftoppm's default PPM on stdout). */
export function pdfPagePixels(pdf: Buffer, page: number, dpi = 40): { width: number; height: number; rgb: Buffer } {
  const ppm = withFile(pdf, (path) =>
    execFileSync('pdftoppm', ['-r', String(dpi), '-f', String(page), '-l', String(page), path], {
      maxBuffer: 256 << 20,
    }),
  );
  const header = /^P6\s+(\d+)\s+(\d+)\s+255\s/.exec(ppm.subarray(0, 64).toString('latin1'));
  if (!header) throw new Error(`pdftoppm did not write an 8-bit PPM for page ${page}`);
  const [width, height] = [Number(header[1]), Number(header[2])];
  return { width, height, rgb: ppm.subarray(header[0].length, header[0].length + width * height * 3) };
}

/** Share (0..1) of a page's pixels that are clearly red, as pdftoppm renders it at `dpi`. */
export function redPixelShare(pdf: Buffer, page: number, dpi = 40): number {
  const { rgb } = pdfPagePixels(pdf, page, dpi);
  let red = 0;
  for (let i = 0; i + 2 < rgb.length; i += 3) {
    const [r, g, b] = [rgb[i]!, rgb[i + 1]!, rgb[i + 2]!];
    if (r >= 150 && r - g >= 30 && r - b >= 30) red += 1;
  }
  return rgb.length === 0 ? 0 : red / (rgb.length / 3);
}

/**
 * How many structure elements of each type the tagged PDF has (`{ Table: 1, TR: 40, … }`), from
 * qpdf's JSON: every dictionary with a structure type (`/S`) and a parent (`/P`).
 */
export function pdfStructureTypes(pdf: Buffer): Record<string, number> {
  const json = withFile(pdf, (path) =>
    execFileSync('qpdf', ['--json=2', '--json-key=qpdf', path], { encoding: 'utf8', maxBuffer: 1024 * 1024 * 1024 }),
  );
  const objects = (JSON.parse(json) as { qpdf: [unknown, Record<string, { value?: Record<string, unknown> }>] })
    .qpdf[1];
  const counts: Record<string, number> = {};
  for (const { value } of Object.values(objects)) {
    if (!value || typeof value !== 'object' || typeof value['/S'] !== 'string' || value['/P'] === undefined) continue;
    const type = (value['/S'] as string).slice(1);
    counts[type] = (counts[type] ?? 0) + 1;
  }
  return counts;
}

/** Where each word sits on page `page` (1-based), in points from the top left, via `pdftotext -bbox`. */
export function pdfWordBoxes(
  pdf: Buffer,
  page = 1,
): { word: string; xMin: number; yMin: number; xMax: number; yMax: number }[] {
  const html = withFile(pdf, (path) =>
    execFileSync('pdftotext', ['-bbox', '-f', String(page), '-l', String(page), path, '-'], { encoding: 'utf8' }),
  );
  return [
    ...html.matchAll(/<word xMin="(-?[\d.]+)" yMin="(-?[\d.]+)" xMax="(-?[\d.]+)" yMax="(-?[\d.]+)">([^<]*)<\/word>/g),
  ].map((m) => ({
    word: m[5]!,
    xMin: Number(m[1]),
    yMin: Number(m[2]),
    xMax: Number(m[3]),
    yMax: Number(m[4]),
  }));
}

/**
 * The barcodes and QR codes on one page, each as `TYPE:text`, as zbar (Debian's zbar-tools, what a
 * scanner app does) decodes them from the page rendered by pdftoppm at `dpi`.
 */
export function pdfBarcodes(pdf: Buffer, page = 1, dpi = 200): string[] {
  return withFile(pdf, (path) => {
    const png = execFileSync('pdftoppm', ['-r', String(dpi), '-f', String(page), '-l', String(page), '-png', path], {
      maxBuffer: 256 << 20,
    });
    const image = join(path, '..', 'page.png');
    writeFileSync(image, png);
    try {
      // XML keeps a symbol's text whole (an EPC payment code holds line breaks).
      const xml = execFileSync('zbarimg', ['-q', '--xml', image], { encoding: 'utf8' });
      return [
        ...xml.matchAll(/<symbol type='([^']+)'[^>]*>[\s\S]*?<data[^>]*><!\[CDATA\[([\s\S]*?)\]\]><\/data>/g),
      ].map((m) => `${m[1]}:${m[2]}`);
    } catch (error) {
      // zbarimg exits 4 when it found nothing.
      if ((error as { status?: number }).status === 4) return [];
      throw error;
    }
  });
}

/** The files embedded in the PDF (qpdf's attachment names, e.g. `factur-x.xml`) with their text. */
export function pdfAttachments(pdf: Buffer): Record<string, string> {
  return withFile(pdf, (path) => {
    const names = execFileSync('qpdf', ['--list-attachments', path], { encoding: 'utf8' })
      .split('\n')
      .map((line) => /^(.+?) -> /.exec(line)?.[1])
      .filter((name): name is string => !!name);
    return Object.fromEntries(
      names.map((name) => [name, execFileSync('qpdf', [`--show-attachment=${name}`, path], { encoding: 'utf8' })]),
    );
  });
}
