import { defineConfig } from 'vitest/config';
import LongFilesFirst from './test/support/long-files-first.js';

/**
 * Three tiers (issue 51), all run by `vitest run` (scripts/test.sh, so CI):
 *  - fast: the units under src/ that need no Chromium (logic, SQLite and PostgreSQL stores, qpdf,
 *    Ghostscript, worker threads): `npm run test:fast`, about a minute, on every change;
 *  - render: Chromium's renders and the studio, the app over HTTP, the docs' blocks;
 *  - drill: several service processes killed and restarted (test/e2e/operations/drill-*).
 */
const CHROMIUM_UNITS = ['src/browser/**', 'src/rendering/**'];
const DRILLS = ['test/e2e/operations/drill-*.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    // Two cores: more parallel files than that only makes Chromium tests slower and flakier.
    maxWorkers: 2,
    // Files share their worker's module cache (each file still makes its own apps and databases): the
    // service's imports (Fastify, the AWS SDK, puppeteer) are loaded once per worker, not once per file.
    isolate: false,
    // Deadlines, not expectations: on a busy 2-core machine a Chromium launch alone can take 30 s.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // expect.poll's deadline (1 s by default): a screen or a thread answering on a loaded machine is waited for, not timed.
    expect: { poll: { timeout: 30_000 } },
    sequence: { sequencer: LongFilesFirst },
    globalSetup: ['test/support/global-setup.ts'],
    exclude: ['node_modules', 'dist', 'studio/**'],
    projects: [
      {
        extends: true,
        test: { name: 'fast', include: ['src/**/*.test.ts'], exclude: ['node_modules', 'dist', ...CHROMIUM_UNITS] },
      },
      {
        extends: true,
        test: {
          name: 'render',
          include: [...CHROMIUM_UNITS.map((dir) => `${dir}/*.test.ts`), 'test/**/*.test.ts'],
          exclude: ['node_modules', 'dist', 'studio/**', ...DRILLS],
        },
      },
      { extends: true, test: { name: 'drill', include: DRILLS } },
    ],
  },
});
