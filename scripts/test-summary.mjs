// Prints vitest's JSON result (written in CI) as one plain closing line: `Tests: N passed, N failed`.
import { readFileSync } from 'node:fs';

const result = JSON.parse(readFileSync(process.argv[2] ?? 'test-results.json', 'utf8'));
const skipped = result.numPendingTests + result.numTodoTests;
const tail = skipped > 0 ? `, ${skipped} skipped` : '';
process.stdout.write(`Tests: ${result.numPassedTests} passed, ${result.numFailedTests} failed${tail}\n`);
