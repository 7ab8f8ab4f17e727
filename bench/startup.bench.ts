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

/** Median wall time of each command; rounds interleave the commands so load swings hit all alike. */
function medians(commands: string[][]): number[] {
  const times: number[][] = commands.map(() => []);
  for (let round = 0; round < RUNS; round++) {
    commands.forEach((args, index) => {
      const start = process.hrtime.bigint();
      execFileSync(process.execPath, args, { env, cwd: home, stdio: ['ignore', 'pipe', 'pipe'] });
      times[index]!.push(Number(process.hrtime.bigint() - start) / 1e6);
    });
  }
  return times.map((list) => {
    list.sort((a, b) => a - b);
    return (list[RUNS / 2 - 1]! + list[RUNS / 2]!) / 2;
  });
}

try {
  const listed = execFileSync(process.execPath, [cli, 'agents', 'list'], { env, cwd: home }).toString();
  if (listed.trim().split('\n').length !== 50) throw new Error(`agents list printed:\n${listed}`);
  const [floor, version, list] = medians([
    ['-e', '0'],
    [cli, 'version'],
    [cli, 'agents', 'list'],
  ]) as [number, number, number];
  const rows = [
    { what: 'node -e 0 (floor)', ms: floor, target: '' },
    { what: 'axe version', ms: version, target: '<= 1.5x' },
    { what: 'axe agents list (50 files)', ms: list, target: '<= 2x' },
  ];
  console.log(`| command | median of ${RUNS} (ms) | ratio to floor | target |`);
  console.log('|---|---:|---:|---|');
  for (const row of rows) {
    console.log(`| ${row.what} | ${row.ms.toFixed(1)} | ${(row.ms / floor).toFixed(2)}x | ${row.target} |`);
  }
} finally {
  rmSync(home, { recursive: true, force: true });
}
