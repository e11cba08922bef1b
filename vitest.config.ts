import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    pool: 'forks',
    // Two cores: more parallel files than that only makes Chromium tests slower and flakier.
    maxWorkers: 2,
    // Deadlines, not expectations: on a busy 2-core machine a Chromium launch alone can take 30 s.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // expect.poll's deadline (1 s by default): a screen or a thread answering on a loaded machine is waited for, not timed.
    expect: { poll: { timeout: 30_000 } },
    globalSetup: ['test/support/global-setup.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'suite',
          include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
          exclude: ['node_modules', 'dist', 'studio/**', 'test/e2e/drills*.test.ts'],
        },
      },
      {
        // Drill (b) restarts the machine's PostgreSQL: it runs after everything else (a later group
        // order), alone, so no other test sees the outage. Drills (a) and (c) harm only their own
        // processes and Redis, and run with the suite (test/e2e/drill-*.test.ts).
        extends: true,
        test: {
          name: 'drills',
          include: ['test/e2e/drills*.test.ts'],
          maxWorkers: 1,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
