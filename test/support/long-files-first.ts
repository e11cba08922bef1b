/**
 * The order test files start in: the longest first, so that on a fresh clone (no timings cached yet,
 * where vitest would start the largest files first) no long file starts last and runs alone while the
 * other worker idles. Past runs' timings, when vitest has them, order the rest.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Longest first, from the per-file times of full runs (the multi-process drills, long documents, the studio). */
const LONG_FILES = [
  // The 315-page report first, beside the studio rather than beside drill (a)'s 200 jobs.
  'test/e2e/documents/long-document.test.ts',
  'test/e2e/studio/studio.test.ts',
  'test/e2e/documents/einvoice-rules.test.ts',
  'test/e2e/operations/drill-worker-kills.test.ts',
  'test/e2e/documents/einvoice-rules-lifted.test.ts',
  'test/e2e/batches/batch-hostile.test.ts',
  'src/browser/sandbox/sandbox-escape.test.ts',
  'test/e2e/jobs/jobs-workers.test.ts',
  'test/e2e/docs/docs-blocks.test.ts', // a service of its own per page, one page after another
  'test/e2e/jobs/pool-fairness.test.ts',
  'test/e2e/batches/generate-cli.test.ts',
  'test/e2e/operations/drill-postgres-restart.test.ts',
  'test/e2e/api/assets.test.ts',
  'test/e2e/documents/pdf-forms.test.ts', // a 300-item batch of a form template
  'src/browser/supervisor.test.ts',
  'test/e2e/operations/ops-cluster.test.ts',
  'test/e2e/operations/drill-redis-down.test.ts',
  'test/e2e/operations/sync-crash.test.ts',
];

export default class LongFilesFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => {
      const index = LONG_FILES.findIndex((name) => file.moduleId.endsWith(name));
      return index === -1 ? LONG_FILES.length : index;
    };
    // Array.prototype.sort is stable: the rest keep the base order.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
