// Startup cost of the CLI: `axe version` and `axe agents list` over 50 agent files, each against
// the floor of starting Node at all (`node -e 0`). Median of 10 runs, side by side.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const RUNS = 10;
const repo = process.env.AXE_REPO ?? process.cwd();
const cli = join(repo, 'dist', 'main.js');
const home = mkdtempSync(join(tmpdir(), 'axe-bench-startup-'));
const agentsDir = join(home, 'config', 'axe', 'agents');
mkdirSync(agentsDir, { recursive: true });
for (let i = 0; i < 50; i++) {
  writeFileSync(
    join(agentsDir, `agent-${String(i).padStart(2, '0')}.toml`),
    `name = "agent-${i}"\ndescription = "Benchmark agent ${i}"\nmodel = "anthropic/claude-sonnet-4-5"\n` +
      `system_prompt = "You review code."\ntools = ["read_file", "list_directory"]\n\n` +
      `[params]\ntemperature = 0.2\nmax_tokens = 2048\n\n[sub_agents_config]\nmax_depth = 2\n`,
  );
}
const env = { ...process.env, XDG_CONFIG_HOME: join(home, 'config'), HOME: home };

function median(args: string[]): number {
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const start = process.hrtime.bigint();
    execFileSync(process.execPath, args, { env, cwd: home, stdio: ['ignore', 'pipe', 'pipe'] });
    times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  times.sort((a, b) => a - b);
  return (times[RUNS / 2 - 1]! + times[RUNS / 2]!) / 2;
}

try {
  const listed = execFileSync(process.execPath, [cli, 'agents', 'list'], { env, cwd: home }).toString();
  if (listed.trim().split('\n').length !== 50) throw new Error(`agents list printed:\n${listed}`);
  const floor = median(['-e', '0']);
  const rows = [
    { what: 'node -e 0 (floor)', ms: floor, target: '' },
    { what: 'axe version', ms: median([cli, 'version']), target: '<= 1.5x' },
    { what: 'axe agents list (50 files)', ms: median([cli, 'agents', 'list']), target: '<= 2x' },
  ];
  console.log(`| command | median of ${RUNS} (ms) | ratio to floor | target |`);
  console.log('|---|---:|---:|---|');
  for (const row of rows) {
    console.log(`| ${row.what} | ${row.ms.toFixed(1)} | ${(row.ms / floor).toFixed(2)}x | ${row.target} |`);
  }
} finally {
  rmSync(home, { recursive: true, force: true });
}
