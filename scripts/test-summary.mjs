// Sums up vitest's JSON result (written in CI) for .ci/run: every skipped test with why it skipped
// (a test that cannot run here must say so, not pass), the ten slowest test files, and one plain
// closing line: `Tests: N passed, N failed, N skipped`.
import { readFileSync } from 'node:fs';
import path from 'node:path';

const result = JSON.parse(readFileSync(process.argv[2] ?? 'test-results.json', 'utf8'));
const files = result.testResults ?? [];
const shown = (file) => path.relative(process.cwd(), file.name);

const skipped = files.flatMap((file) =>
  file.assertionResults
    .filter((test) => test.status === 'pending' || test.status === 'skipped' || test.status === 'todo')
    .map((test) => ({ file: shown(file), name: test.fullName, reason: test.meta?.skipReason })),
);
if (skipped.length > 0) {
  process.stdout.write(`Skipped (${skipped.length}):\n`);
  for (const test of skipped) {
    process.stdout.write(`  ${test.file} > ${test.name}: ${test.reason ?? '(no reason given)'}\n`);
  }
}

const slowest = files
  .map((file) => ({ file: shown(file), seconds: (file.endTime - file.startTime) / 1000 }))
  .sort((a, b) => b.seconds - a.seconds)
  .slice(0, 10);
if (slowest.length > 0) {
  process.stdout.write('Slowest test files:\n');
  for (const { file, seconds } of slowest)
    process.stdout.write(`  ${seconds.toFixed(1).padStart(6)} s  ${file}\n`);
}

const skippedCount = result.numPendingTests + result.numTodoTests;
const tail = skippedCount > 0 ? `, ${skippedCount} skipped` : '';
process.stdout.write(`Tests: ${result.numPassedTests} passed, ${result.numFailedTests} failed${tail}\n`);
