import type { TestContext } from 'vitest';

declare module 'vitest' {
  interface TaskMeta {
    /** Why the test skipped itself: read by scripts/test-summary.mjs from the JSON report. */
    skipReason?: string;
  }
}

/**
 * Skips the running test, saying why: in vitest's output and in the JSON report, whose summary
 * (.ci/run) lists every skipped test with its reason. A test that cannot run here must skip, never
 * return early and pass.
 */
export function skipBecause(context: TestContext, reason: string): never {
  context.task.meta.skipReason = reason;
  return context.skip(reason);
}
