/**
 * `npm run bench -- --rounds N`: the same comparison N times, the engines' order reversed every other
 * round, and each engine's throughput as a ratio to the floor's *of the same round*, summarised as the
 * median and the range over the rounds.
 *
 * Why: on the shared VMs these benches run on, the machine's speed drifts by more than the differences
 * being measured. Measured 2026-11-27 on one machine of this kind, a few minutes apart: the floor printed
 * 19.09, then 15.72 invoices/s at concurrency 2, and Pressroom's ratio to it read 0.71 in one run and
 * 0.89 in the next. A ratio within one round cancels what drifts slowly; reversing the order cancels a
 * drift within a round (an engine that always ran second would always get the later, different
 * minutes); the median and range say how far one round can be trusted.
 */
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

interface BatchResult {
  readonly engine: string;
  readonly fixture: string;
  readonly concurrency: number;
  readonly docsPerSec: number;
}

/** The harness's `--engines` value for round `round` (0-based): as given, reversed on odd rounds. */
export function engineOrder(engines: string, round: number): string {
  const list = engines
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean);
  return (round % 2 === 1 ? list.reverse() : list).join(',');
}

/** The result file bench.mjs wrote for `label` in `outDir` (`results-<time>-<label>.json`). */
export function resultFile(outDir: string, label: string): string {
  const file = readdirSync(outDir).find((name) => name.startsWith('results-') && name.endsWith(`-${label}.json`));
  if (!file) throw new Error(`no result file for ${label} in ${outDir}`);
  return join(outDir, file);
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const resultsOf = (file: string) => (JSON.parse(readFileSync(file, 'utf8')) as { results: BatchResult[] }).results;

/**
 * A markdown table: per engine other than `reference` (the floor, or wkhtmltopdf for issue 17's report
 * goals), fixture and concurrency, docs/s ÷ the same round's `reference` — found in the round's own file,
 * or in `referenceFiles[round]` (issue 17's untagged goals are against the tagged pass of the round).
 */
export function roundsTable(
  files: readonly string[],
  reference = 'floor',
  referenceFiles: readonly string[] = files,
): string {
  const ratios = new Map<string, number[]>();
  const rates = new Map<string, number[]>();
  for (const [round, file] of files.entries()) {
    const results = resultsOf(file);
    const references = referenceFiles === files ? results : resultsOf(referenceFiles[round]!);
    for (const batch of results) {
      const key = `${batch.engine} | ${batch.fixture} | ${batch.concurrency}`;
      rates.set(key, [...(rates.get(key) ?? []), batch.docsPerSec]);
      // Against its own round's file an engine is its own reference; against another's (untagged ÷ tagged) it is not.
      if (batch.engine === reference && referenceFiles === files) continue;
      const base = references.find(
        (r) => r.engine === reference && r.fixture === batch.fixture && r.concurrency === batch.concurrency,
      );
      if (base && base.docsPerSec > 0)
        ratios.set(key, [...(ratios.get(key) ?? []), batch.docsPerSec / base.docsPerSec]);
    }
  }
  const lines = [
    `| engine | fixture | c | docs/s per round | ÷ the round's ${reference}, median | range |`,
    '|---|---|--:|---|--:|---|',
  ];
  for (const [key, values] of rates) {
    const r = ratios.get(key);
    const ratioCells = r
      ? `${median(r).toFixed(2)} | ${Math.min(...r).toFixed(2)}–${Math.max(...r).toFixed(2)}`
      : key.startsWith(`${reference} |`)
        ? '1.00 | '
        : '– | ';
    lines.push(`| ${key} | ${values.map((v) => v.toFixed(2)).join(', ')} | ${ratioCells} |`);
  }
  return lines.join('\n');
}
