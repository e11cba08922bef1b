/**
 * Split: one PDF into several, by `ranges` ("1-3", "4-": a range may stay open to the end) or `every`
 * n pages. Each part is a qpdf page selection of its own (qpdf.ts); the parts go back as links, one
 * per part, or in one zip (zip-parts.ts).
 */
import { ValidationError } from '../shared/errors.js';
import { readPdfInputs, type InputReader, type PdfInputLimits, type PdfSource } from './pdf-inputs.js';

/**
 * Parts one split may make: each is a qpdf run, a stored file and a link in the answer, so a split of
 * a 2000-page document into single pages is refused rather than run as 2000 processes.
 */
export const MAX_SPLIT_PARTS = 100;

/** How to cut: ranges, or every n pages (exactly one). */
export interface SplitPlan {
  ranges?: string[] | null;
  every?: number | null;
}

/** A checked split: the input and each part's pages (1-based, in order). */
export interface PreparedSplit {
  pdf: Buffer;
  parts: { label: string; pages: number[] }[];
}

function refuse(loc: (string | number)[], msg: string, type: string): never {
  throw new ValidationError([{ loc: ['body', ...loc], msg, type }]);
}

const RANGE = /^\s*(\d{1,9})\s*(?:(-)\s*(\d{1,9})?\s*)?$/;

/** `"4-"` → from 4 to the end (`to` undefined). Checked before any download. */
function parseRange(text: string, index: number): { from: number; to: number | undefined } {
  const match = RANGE.exec(text);
  if (!match)
    refuse(['ranges', index], `"${text}" is not a page or a range such as "1-3" or "4-" (to the end)`, 'pages_invalid');
  const from = Number(match[1]);
  const to = match[2] ? (match[3] === undefined ? undefined : Number(match[3])) : from;
  if (from === 0 || to === 0) refuse(['ranges', index], `"${text}": pages are numbered from 1`, 'pages_invalid');
  if (to !== undefined && to < from)
    refuse(['ranges', index], `"${text}" runs backwards; write it as "${to}-${from}"`, 'pages_invalid');
  return { from, to };
}

/** Checks the plan (before any download), then the input, then the plan against its pages. */
export async function prepareSplit(
  source: PdfSource,
  plan: SplitPlan,
  limits: PdfInputLimits,
  reader: InputReader,
): Promise<PreparedSplit> {
  const hasRanges = plan.ranges != null;
  if (hasRanges === (plan.every != null))
    refuse(
      hasRanges ? ['every'] : ['ranges'],
      'Give either ranges (e.g. ["1-3", "4-"]) or every (pages per part), exactly one',
      hasRanges ? 'input_conflict' : 'missing',
    );
  const ranges = plan.ranges?.map(parseRange);
  if (ranges && ranges.length > MAX_SPLIT_PARTS)
    refuse(['ranges'], `A split makes at most ${MAX_SPLIT_PARTS} parts`, 'too_many_parts');
  const [input] = await readPdfInputs([source], [[]], limits, reader);
  const pageCount = input!.pages;
  const bounds =
    ranges ??
    Array.from({ length: Math.ceil(pageCount / plan.every!) }, (_, i) => ({
      from: i * plan.every! + 1,
      to: Math.min(pageCount, (i + 1) * plan.every!),
    }));
  if (bounds.length > MAX_SPLIT_PARTS)
    refuse(
      ['every'],
      `every ${plan.every} cuts these ${pageCount} pages into ${bounds.length} parts; a split makes at most ${MAX_SPLIT_PARTS}`,
      'too_many_parts',
    );
  const parts = bounds.map(({ from, to }, i) => {
    const last = to ?? pageCount;
    if (last > pageCount || from > pageCount)
      refuse(
        ranges ? ['ranges', i] : ['every'],
        `"${from}-${to ?? ''}" is outside the document, which has ${pageCount} page${pageCount === 1 ? '' : 's'}`,
        'page_out_of_range',
      );
    return {
      label: from === last ? String(from) : `${from}-${last}`,
      pages: Array.from({ length: last - from + 1 }, (_, k) => from + k),
    };
  });
  return { pdf: input!.pdf, parts };
}

/** The parts' bytes, in order. */
export function splitPdf(prepared: PreparedSplit, { qpdf, accountId }: InputReader): Promise<Buffer[]> {
  return qpdf.splitPages(
    prepared.pdf,
    prepared.parts.map((p) => p.pages),
    accountId,
  );
}
