// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the mutants' snippets are TypeScript source, template literals included
// `npm run mutation`: does the test suite notice when a behaviour users depend on breaks?
//
// For each mutant below — a small edit that breaks one behaviour — the script applies the edit in a
// scratch copy of the repository (a temp dir; node_modules is a link to this one's), builds, runs
// only the test files that should notice, and counts the mutant caught when one of their tests
// that passed unmutated fails (the unmutated run comes first, once). It prints
// caught/total and exits 1 if any mutant survived (a behaviour no test guards), or 2 if a mutant's
// snippet no longer matches exactly once (the source moved: update the mutant, so that this script
// does not rot silently).
//
// A mutant names no file: its snippet is searched for across cmd/ and internal/, where files move
// (a folder split, a rename); it must occur exactly once there.
//
// Options: `--only <name part>` runs the matching mutants; `--keep` leaves the scratch copy;
// `--check` only checks that every snippet is found once.
// Slow (a build and some test files per mutant): run it with `nice`; it is not part of `npm test`.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  cpSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** @typedef {{ name: string, find: string, replace: string, tests: string[] }} Mutant */

/** @type {Mutant[]} */
const MUTANTS = [
  // Secrets never reach what axe writes.
  {
    name: 'stderr of a run (--verbose, warnings, the live tree) unmasked',
    find: 'return { write: (text) => sink.write(maskSecrets(text)) };',
    replace: 'return { write: (text) => sink.write(text) };',
    tests: ['test/run/secret-sinks.e2e.test.ts'],
  },
  {
    name: 'stdout of a run (the answer, --json) unmasked',
    find: '      flush();\n      return sink.write(maskSecrets(text));',
    replace: '      flush();\n      return sink.write(text);',
    tests: ['test/run/secret-sinks.e2e.test.ts'],
  },
  {
    name: 'the final error line unmasked',
    find: 'const message = maskSecrets(\n    (isAxeError(error) ? undefined : systemErrorLine(error)) ?? errorMessage(error),\n  );',
    replace:
      'const message = (isAxeError(error) ? undefined : systemErrorLine(error)) ?? errorMessage(error);',
    tests: ['test/run/secret-sinks.e2e.test.ts'],
  },
  {
    name: '--events unmasked',
    find: 'return `${maskSecrets(JSON.stringify(event))}\\n`;',
    replace: 'return `${JSON.stringify(event)}\\n`;',
    tests: ['test/run/secret-sinks.e2e.test.ts'],
  },
  {
    name: 'transcripts of the run record unmasked',
    find: 'const text = `${maskSecrets(line)}\\n`;',
    replace: 'const text = `${line}\\n`;',
    tests: ['test/run/secret-sinks.e2e.test.ts'],
  },
  {
    name: 'cassette entries unmasked',
    find: '`${maskSecrets(JSON.stringify(entry.deltas ? { ...entry, deltas: maskedDeltas(entry.deltas) } : entry))}\\n`',
    replace: '`${JSON.stringify(entry)}\\n`',
    tests: ['test/run/secret-sinks.e2e.test.ts'],
  },
  {
    name: 'the HTML trace unmasked',
    find: 'stdout.write(maskSecrets(renderHtmlTrace(run)));',
    replace: 'stdout.write(renderHtmlTrace(run));',
    tests: ['test/run/secret-sinks.e2e.test.ts'],
  },
  {
    name: 'runs show unmasked',
    find: "  if (run.tree) walk(run.tree, '', true, true);\n  return `${maskSecrets(lines.join('\\n'))}\\n`;",
    replace: "  if (run.tree) walk(run.tree, '', true, true);\n  return `${lines.join('\\n')}\\n`;",
    tests: ['test/run/secret-sinks.e2e.test.ts'],
  },
  // Outcomes callers read.
  {
    name: 'spawn_agents is an error when any task failed (not only when all did)',
    find: "children.every((r) => r.status !== 'completed');",
    replace: "children.some((r) => r.status !== 'completed');",
    tests: ['test/run/spawn-agents.e2e.test.ts'],
  },
  {
    name: 'spawn_agents is never an error',
    find: 'return { output: { content: JSON.stringify(aggregate), isError: failed }, children };',
    replace: 'return { output: { content: JSON.stringify(aggregate), isError: false }, children };',
    tests: ['test/run/spawn-agents.e2e.test.ts'],
  },
  {
    name: 'a run over its budget exits 1 instead of 4',
    find: '  budget: 4,',
    replace: '  budget: 1,',
    tests: [
      'test/run/budget-fanout.e2e.test.ts',
      'test/run/outcomes.e2e.test.ts',
      'test/run/limits.e2e.test.ts',
    ],
  },
  // Budgets and limits.
  {
    name: 'the token budget lets a call start once it is spent',
    find: 'if (this.limit !== undefined && this.spent >= this.limit) return new BudgetError(this.spent, this.limit);',
    replace:
      'if (this.limit !== undefined && this.spent > this.limit) return new BudgetError(this.spent, this.limit);',
    tests: ['test/runner/budget.test.ts', 'test/run/budget-fanout.e2e.test.ts'],
  },
  {
    name: 'a call past the tool-call budget runs anyway',
    find: 'if (!setup.terminal.names.has(call.name) && !ctx.limits.takeToolCall())',
    replace: 'if (!setup.terminal.names.has(call.name) && !(ctx.limits.takeToolCall() || true))',
    tests: [
      'test/run/limits.e2e.test.ts',
      'test/run/child-limits.e2e.test.ts',
      'test/run/spawn-agents.e2e.test.ts',
    ],
  },
  {
    name: 'max_spawn is not enforced',
    find: 'if (tasks.length > maxSpawn) return fail(',
    replace: 'if (tasks.length > maxSpawn + 100) return fail(',
    tests: ['test/run/spawn-agents.e2e.test.ts'],
  },
  // Fan-out.
  {
    name: 'parallel calls run one after another',
    find: 'if (options.parallel && inputs.length > 1) {',
    replace: 'if (false) {',
    tests: ['test/runner/fanout.test.ts', 'test/run/spawn-agents.e2e.test.ts'],
  },
  {
    name: 'fan-out results come back in reverse order',
    find: '    return Promise.allSettled(started);\n  }',
    replace: '    return Promise.allSettled(started).then((all) => all.reverse());\n  }',
    tests: ['test/runner/fanout.test.ts', 'test/run/spawn-agents.e2e.test.ts'],
  },
  // Files written whole.
  {
    name: 'a failed atomic write leaves its temp file behind',
    find: 'if (!placed) await unlink(temp).catch(() => {});',
    replace: 'if (!placed && false) await unlink(temp).catch(() => {});',
    tests: ['test/fs/write-atomic.test.ts', 'test/tools/atomic-writes.e2e.test.ts'],
  },
  {
    name: 'an atomic write renames before its data is written',
    find: '      await handle.writeFile(data);\n      if (existing) await keepOwnerAndMode(handle, existing);',
    replace:
      '      if (!options.exclusive) await fsPromises().copyFile(temp, target);\n      await handle.writeFile(data);\n      if (existing) await keepOwnerAndMode(handle, existing);',
    tests: ['test/fs/write-atomic.test.ts', 'test/tools/atomic-writes.e2e.test.ts'],
  },
  // Replays and retries.
  {
    name: 'the cassette key leaves out the provider',
    find: 'JSON.stringify({ provider, ...rest })',
    replace: 'JSON.stringify({ ...rest })',
    tests: [
      'test/runner/cassette.test.ts',
      'test/run/cassette-safety.e2e.test.ts',
      'test/run/replay-stream.e2e.test.ts',
    ],
  },
  {
    name: 'a 5xx is not retried',
    find: "const RETRYABLE = new Set(['rate_limit', 'overloaded', 'server']);",
    replace: "const RETRYABLE = new Set(['rate_limit', 'overloaded']);",
    tests: ['test/provider/retry.test.ts', 'test/provider/faults.test.ts'],
  },
  // Resume.
  {
    name: '--resume keeps the tool message of calls Ctrl-C stopped',
    find: 'return stoppedInCalls(run, asked.toolCalls) ? messages.slice(0, -1) : messages;',
    replace: 'return messages;',
    tests: ['test/record/pick-up.test.ts', 'test/record/resume-interrupted.e2e.test.ts'],
  },
];

const ROOT = path.resolve(import.meta.dirname, '..');
const SEARCHED = ['cmd', 'internal'];
const args = process.argv.slice(2);
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
const keep = args.includes('--keep');
const checkOnly = args.includes('--check');
const chosen = MUTANTS.filter((m) => only === undefined || m.name.includes(only));

function sourceFiles(dir) {
  return readdirSync(dir, { recursive: true })
    .map((name) => path.join(dir, name))
    .filter((file) => file.endsWith('.ts') && statSync(file).isFile());
}

/** The one file holding `find`, and its text; throws naming the mutant when there is not one. */
function locate(root, mutant) {
  const hits = [];
  for (const file of SEARCHED.flatMap((dir) => sourceFiles(path.join(root, dir)))) {
    const text = readFileSync(file, 'utf8');
    const count = text.split(mutant.find).length - 1;
    for (let i = 0; i < count; i++) hits.push({ file, text });
  }
  if (hits.length !== 1) {
    throw new Error(
      `mutant "${mutant.name}": its snippet occurs ${hits.length} times in ${SEARCHED.join('/, ')}/ (expected once): update it`,
    );
  }
  return hits[0];
}

/** Runs vitest on `tests` in `root`: whether every test passed, and the names of those that failed. */
function runTests(root, tests) {
  const result = spawnSync(process.execPath, ['node_modules/vitest/vitest.mjs', 'run', ...tests], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, CI: '', NO_COLOR: '1' },
    maxBuffer: 64 << 20,
  });
  // vitest's closing list: one ` FAIL  <file> > <test>` line per failed test (or file).
  const failed = `${result.stdout}${result.stderr}`.split('\n').filter((line) => /^\s*FAIL\s/.test(line));
  return { pass: result.status === 0, failed: [...new Set(failed.map((line) => line.trim()))] };
}

// Every snippet is checked before anything runs: a moved source fails at once.
try {
  for (const mutant of chosen) locate(ROOT, mutant);
} catch (error) {
  process.stderr.write(`mutation: ${error.message}\n`);
  process.exit(2);
}
if (checkOnly) {
  process.stdout.write(`mutation: all ${chosen.length} snippets found once\n`);
  process.exit(0);
}

const scratch = mkdtempSync(path.join(os.tmpdir(), 'axe-mutation-'));
const copy = path.join(scratch, 'repo');
cpSync(ROOT, copy, {
  recursive: true,
  filter: (source) => !['node_modules', 'dist', '.git', 'test-results.json'].includes(path.basename(source)),
});
symlinkSync(path.join(ROOT, 'node_modules'), path.join(copy, 'node_modules'));

let status = 0;
try {
  const allTests = [...new Set(chosen.flatMap((m) => m.tests))];
  process.stdout.write(`baseline: ${allTests.length} test files ... `);
  execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: copy, stdio: 'inherit' });
  const survivors = [];
  // A mutant is caught when a test that passed unmutated fails: a test that already fails here (a
  // broken or load-sensitive one, named below) catches nothing.
  const baseline = runTests(copy, allTests);
  const failedBefore = new Set(baseline.failed);
  if (baseline.pass) process.stdout.write('pass\n');
  else {
    process.stdout.write(`${failedBefore.size} failing without any mutant (they count for nothing):\n`);
    for (const test of baseline.failed) process.stdout.write(`  ${test}\n`);
  }
  for (const [i, mutant] of chosen.entries()) {
    const { file, text } = locate(copy, mutant);
    writeFileSync(file, text.replace(mutant.find, mutant.replace));
    const started = Date.now();
    let caught;
    try {
      // globalSetup builds dist/ before the tests.
      const run = runTests(copy, mutant.tests);
      // A failure vitest names no test of (a build or import error) counts too.
      caught = run.failed.some((test) => !failedBefore.has(test)) || (!run.pass && run.failed.length === 0);
      if (!run.pass && run.failed.length === 0) {
        process.stdout.write(
          `  (vitest failed without naming a test: a build or import error? check with --only and --keep)\n`,
        );
      }
    } finally {
      writeFileSync(file, text);
    }
    const seconds = ((Date.now() - started) / 1000).toFixed(0);
    const where = path.relative(copy, file);
    process.stdout.write(
      `${caught ? 'caught  ' : 'SURVIVED'} ${i + 1}/${chosen.length} ${mutant.name} (${where}, ${seconds}s)\n`,
    );
    if (!caught) survivors.push(mutant.name);
  }
  const caught = chosen.length - survivors.length;
  process.stdout.write(`\nmutation: ${caught}/${chosen.length} caught\n`);
  for (const name of survivors) process.stdout.write(`  survived: ${name}\n`);
  if (survivors.length > 0) status = 1;
} finally {
  if (keep) process.stdout.write(`scratch copy kept: ${copy}\n`);
  else rmSync(scratch, { recursive: true, force: true });
}
process.exit(status);
