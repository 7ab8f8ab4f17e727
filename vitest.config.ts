import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'internal/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // dist/ is built before the tests: the end-to-end tests run it.
    globalSetup: ['test/global-setup.ts'],
    // In CI, also a machine-readable result for the closing `N passed, N failed` line of .ci/run.
    reporters: process.env.CI ? ['default', ['json', { outputFile: 'test-results.json' }]] : ['default'],
  },
});
