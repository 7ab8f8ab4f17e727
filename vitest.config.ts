import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'internal/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // The tests mostly wait: on a spawned axe, on the fake server. vitest's default of one worker
    // per core but one leaves a 2-core machine running a single file at a time (about 330 s for
    // the suite); three files at once take about 150 s there. No test measures wall-clock time, so
    // sharing the cores changes no result.
    maxWorkers: Math.max(3, availableParallelism() - 1),
    // dist/ is built before the tests: the end-to-end tests run it. The PostgreSQL servers the
    // queue's tests start (test/pg/) are stopped at the end of the run.
    globalSetup: ['test/global-setup.ts', 'test/pg/global-setup.ts'],
    // In CI, also a machine-readable result for the closing `N passed, N failed` line of .ci/run.
    reporters: process.env.CI ? ['default', ['json', { outputFile: 'test-results.json' }]] : ['default'],
  },
});
