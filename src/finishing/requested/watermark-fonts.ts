/**
 * The fonts a text watermark is drawn in: TrueType files the service's Debian image installs
 * (fonts-noto-core, fonts-dejavu-core, fonts-droid-fallback, fonts-nanum), tried in order; the first that has a
 * glyph for every character of the text is embedded (subset) in the document. Each covers scripts
 * written without shaping, which @libpdf/core does not do: Latin, Greek, Cyrillic (Noto Sans, DejaVu
 * Sans), Georgian, Armenian, Chinese and Japanese (Droid Sans Fallback: Debian ships Noto CJK only
 * as a TrueType collection, which @libpdf/core cannot embed) and Korean in precomposed syllables (Nanum
 * Gothic). Text in scripts that need shaping or run right to left (Arabic, Hebrew, Indic, Thai,
 * conjoining Hangul jamo) is laid out by Chromium instead (text-layout.ts); `needsShaping` tells which.
 */
import { readFile } from 'node:fs/promises';
import { PDF, type EmbeddedFont } from '@libpdf/core';
import { ValidationError } from '../../shared/errors.js';

/** Candidate fonts, most general first. */
export const WATERMARK_FONT_FILES = [
  '/usr/share/fonts/truetype/noto/NotoSans-Regular.ttf',
  '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf',
  '/usr/share/fonts/truetype/noto/NotoSansGeorgian-Regular.ttf',
  '/usr/share/fonts/truetype/noto/NotoSansArmenian-Regular.ttf',
  '/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf',
  '/usr/share/fonts/truetype/nanum/NanumGothic.ttf',
] as const;

/** A font file read once, and parsed once in a scratch document to answer which characters it has. */
interface LoadedFont {
  bytes: Uint8Array;
  probe: EmbeddedFont;
}

const loaded = new Map<string, Promise<LoadedFont | undefined>>();

function load(path: string): Promise<LoadedFont | undefined> {
  let font = loaded.get(path);
  if (!font) {
    // A font the image lacks is skipped, as if it covered nothing.
    font = readFile(path).then(
      (bytes) => ({ bytes, probe: PDF.create().embedFont(bytes) }),
      () => undefined,
    );
    loaded.set(path, font);
  }
  return font;
}

/** The characters no candidate font can draw, for the 422. */
async function uncovered(text: string): Promise<string[]> {
  const missing = new Set<string>();
  for (const char of text) {
    if (/\s/u.test(char)) continue;
    let found = false;
    for (const path of WATERMARK_FONT_FILES) if ((await load(path))?.probe.canEncode(char)) found = true;
    if (!found) missing.add(char);
  }
  return [...missing];
}

/**
 * Characters of scripts that are shaped or written right to left — Hebrew, Arabic, Syriac, Thaana, N'Ko,
 * Indic, Thai, Lao, Tibetan, Myanmar, Khmer, Mongolian, conjoining Hangul jamo and their presentation forms: DejaVu Sans has
 * glyphs for some of them, but drawn one by one, left to right, they would read wrong.
 */
const NEEDS_SHAPING =
  /[\u0590-\u08FF\u0900-\u0DFF\u0E00-\u0FFF\u1000-\u11FF\u1780-\u18AF\uA960-\uA97F\uD7B0-\uD7FF\uFB1D-\uFDFF\uFE70-\uFEFF]/u;

/** Whether `text` has a character of a script that must be shaped (laid out by Chromium, text-layout.ts). */
export function needsShaping(text: string): boolean {
  return NEEDS_SHAPING.test(text);
}

/**
 * The rule itself, for every text the service draws in a font of its own (watermarks; a form template's
 * values, pdf-forms/form-values.ts): the first candidate file with a glyph for every character of
 * `text`; undefined when none has. Says nothing of shaping (`needsShaping`).
 */
export async function coveringFontFile(text: string): Promise<string | undefined> {
  for (const path of WATERMARK_FONT_FILES) if ((await load(path))?.probe.canEncode(text)) return path;
  return undefined;
}

/** The characters of `text` no candidate font can draw (whitespace aside), for a 422. */
export function charactersNoFontDraws(text: string): Promise<string[]> {
  return uncovered(text);
}

/** Up to ten characters with their code points, for a 422. */
export function describeCharacters(chars: string[]): string {
  return describe(chars);
}

/**
 * The bytes of the first font that draws all of `text`; a 422 at `loc` naming the characters none
 * does, or that need shaping (checked before any charge).
 */
export async function watermarkFont(text: string, loc: (string | number)[]): Promise<Uint8Array> {
  const shaped = [...new Set([...text].filter((char) => NEEDS_SHAPING.test(char)))];
  if (shaped.length > 0)
    throw new ValidationError([
      {
        loc,
        msg: `${describe(shaped)} belong to a script drawn with shaping or right to left, which needs Chromium to lay it out, and this process has none; use an image or PDF asset instead`,
        type: 'watermark_text_unsupported',
      },
    ]);
  const path = await coveringFontFile(text);
  if (path) return (await load(path))!.bytes;
  const missing = await uncovered(text);
  const msg =
    missing.length > 0
      ? `No font here draws ${describe(missing)}; use characters of the scripts docs/finishing.md lists, or an image or PDF asset`
      : 'No single font here draws every character of this text together; use characters of one script, or an image asset';
  throw new ValidationError([{ loc, msg, type: 'watermark_text_unsupported' }]);
}

/** Up to ten characters with their code points, for a 422. */
function describe(chars: string[]): string {
  return chars
    .slice(0, 10)
    .map((c) => `"${c}" (U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')})`)
    .join(', ');
}
