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
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['node_modules', 'dist', 'studio/**'],
  },
});
