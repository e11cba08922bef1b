/**
 * A plain line diff: the longest common subsequence of two texts' lines, after the common first and
 * last lines are set aside (an edit to a template usually touches a few lines in the middle). Pure, no DOM.
 *
 * Written here rather than taken from a library: the studio needs only this (issue 14 asks for "a plain
 * text diff"), it is a few dozen lines, and the LCS table is bounded so a huge rewrite stays fast.
 */

export type DiffOp = 'same' | 'added' | 'removed';

export interface DiffLine {
  op: DiffOp;
  text: string;
  /** 1-based line number in the old text (same, removed). */
  oldNumber?: number;
  /** 1-based line number in the new text (same, added). */
  newNumber?: number;
}

/** A run of unchanged lines left out of the view. */
export interface DiffSkip {
  op: 'skip';
  count: number;
}

/** Past this many LCS cells (e.g. 2,000 × 2,000 changed lines), the changed middle is shown as removed then added. */
const MAX_TABLE_CELLS = 4_000_000;

/** '' has no lines; otherwise split on \n (a trailing newline gives a last, empty line). */
export function splitLines(text: string): string[] {
  return text === '' ? [] : text.split(/\r?\n/);
}

/** The lines of `after` against those of `before`, in order: same, removed and added. */
export function diffLines(before: string, after: string): DiffLine[] {
  const a = splitLines(before);
  const b = splitLines(after);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const out: DiffLine[] = [];
  const same = (i: number, j: number) => out.push({ op: 'same', text: a[i]!, oldNumber: i + 1, newNumber: j + 1 });
  const removed = (i: number) => out.push({ op: 'removed', text: a[i]!, oldNumber: i + 1 });
  const added = (j: number) => out.push({ op: 'added', text: b[j]!, newNumber: j + 1 });

  for (let i = 0; i < start; i++) same(i, i);
  const n = endA - start;
  const m = endB - start;
  if (n * m > MAX_TABLE_CELLS) {
    for (let i = start; i < endA; i++) removed(i);
    for (let j = start; j < endB; j++) added(j);
  } else {
    // lcs[i * (m + 1) + j]: LCS length of a[start+i..endA) and b[start+j..endB). It is at most
    // min(n, m) ≤ 2,000 under the cap, so 16 bits hold it.
    const width = m + 1;
    const lcs = new Uint16Array((n + 1) * width);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        lcs[i * width + j] =
          a[start + i] === b[start + j]
            ? lcs[(i + 1) * width + j + 1]! + 1
            : Math.max(lcs[(i + 1) * width + j]!, lcs[i * width + j + 1]!);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (a[start + i] === b[start + j]) same(start + i++, start + j++);
      else if (lcs[(i + 1) * width + j]! >= lcs[i * width + j + 1]!) removed(start + i++);
      else added(start + j++);
    }
    while (i < n) removed(start + i++);
    while (j < m) added(start + j++);
  }
  for (let k = 0; k < a.length - endA; k++) same(endA + k, endB + k);
  return out;
}

/** True when the diff has at least one added or removed line. */
export const hasChanges = (lines: readonly DiffLine[]) => lines.some((l) => l.op !== 'same');

/** Keeps `context` unchanged lines around each change and folds the longer unchanged runs into skips. */
export function withContext(lines: readonly DiffLine[], context = 3): (DiffLine | DiffSkip)[] {
  const keep = lines.map(() => false);
  lines.forEach((line, index) => {
    if (line.op === 'same') return;
    for (let k = Math.max(0, index - context); k <= Math.min(lines.length - 1, index + context); k++) keep[k] = true;
  });
  const out: (DiffLine | DiffSkip)[] = [];
  lines.forEach((line, index) => {
    if (keep[index]) return void out.push(line);
    const last = out[out.length - 1];
    if (last?.op === 'skip') last.count++;
    else out.push({ op: 'skip', count: 1 });
  });
  return out;
}
