// `axe run <agent> --map FILE` at scale, against the local fake server (in this process):
// - 2,000 items, each answered after 100 ms, 64 at a time: wall time against the ideal (items ÷
//   concurrency × latency, plus one start-up: a batch of one item answered at once);
// - peak RSS of a batch of 20,000 items against one of 2,000 (answered at once): the input and the
//   output are streamed and nothing is kept of a finished item, so it should hardly grow;
// - the CPU each item costs the axe process (user + system, over the 2,000 and 20,000 runs);
// - 1,000 items against a server that takes 50 requests a second (a token bucket) and answers 429
//   with `retry-after` beyond it: wall time against the 20 s the limit allows, and the share of
//   requests refused (the items share one rate gate, so a 429 pauses them all).
// Item run records are off (`--no-record-run`): this is the batch's own cost; a record per item
// is a run's cost, measured in run.bench.ts. Peak RSS and CPU come from a preload that writes
// `process.resourceUsage()` at exit.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeLlm } from '../test/fake-llm/index.js';
import { benchEnv } from './home.js';

const repo = process.env.AXE_REPO ?? process.cwd();
const cli = join(repo, 'dist', 'main.js');
const home = mkdtempSync(join(tmpdir(), 'axe-bench-batch-'));
const agentsDir = join(home, 'agents');
mkdirSync(agentsDir);
writeFileSync(join(agentsDir, 'labeler.toml'), 'name = "labeler"\nmodel = "anthropic/claude-sonnet-4-5"\n');
const usageLog = join(home, 'usage.json');
const preload = join(home, 'usage.cjs');
writeFileSync(
  preload,
  `process.on('exit', () => require('node:fs').writeFileSync(process.env.USAGE_LOG, JSON.stringify(process.resourceUsage())));\n`,
);

let latencyMs = 0;
const fake = await startFakeLlm({ respond: () => ({ text: 'label', delayMs: latencyMs }) });
const env = benchEnv(home, fake.url, { USAGE_LOG: usageLog });

function itemsFile(count: number): string {
  const file = join(home, `items-${count}.jsonl`);
  const lines: string[] = [];
  for (let i = 0; i < count; i++)
    lines.push(JSON.stringify({ id: `t-${i}`, message: `ticket ${i}: it broke` }));
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

interface Measured {
  ms: number;
  rssKb: number;
  cpuMs: number;
  lines: number;
}

const limited = await startFakeLlm({ respond: () => ({ text: 'label' }), rateLimit: { perSecond: 50 } });

function batch(count: number, concurrency: number, latency: number, server = fake): Promise<Measured> {
  latencyMs = latency;
  server.reset();
  server.respond(() => ({ text: 'label', delayMs: latencyMs }));
  const runEnv = { ...env, AXE_ANTHROPIC_BASE_URL: server.url };
  const file = itemsFile(count);
  const args = ['--require', preload, cli, 'run', 'labeler', '--agents-dir', agentsDir, '--map', file];
  args.push('--key', 'id', '--concurrency', String(concurrency), '--no-record-run', '--progress', 'never');
  const started = performance.now();
  return new Promise((resolve, reject) =>
    execFile(
      process.execPath,
      args,
      { env: runEnv, cwd: home, maxBuffer: 1 << 30 },
      (error, stdout, stderr) => {
        const ms = performance.now() - started;
        if (error) return reject(new Error(`batch of ${count}: ${stderr || error.message}`));
        const usage = JSON.parse(readFileSync(usageLog, 'utf8')) as NodeJS.ResourceUsage;
        const lines = stdout.split('\n').filter((line) => line !== '').length;
        resolve({ ms, rssKb: usage.maxRSS, cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000, lines });
      },
    ),
  );
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

try {
  await batch(1, 1, 0); // warm-up: writes the code cache
  const startups: number[] = [];
  for (let i = 0; i < 5; i++) startups.push((await batch(1, 1, 0)).ms);
  const startup = median(startups);

  const rows: string[][] = [];
  const timed: Measured[] = [];
  for (let i = 0; i < 3; i++) timed.push(await batch(2000, 64, 100));
  const wall = median(timed.map((m) => m.ms));
  const ideal = Math.ceil(2000 / 64) * 100 + startup;
  rows.push([
    '2,000 items × 100 ms, --concurrency 64',
    `${(wall / 1000).toFixed(2)} s`,
    `ideal ${(ideal / 1000).toFixed(2)} s: ${(wall / ideal).toFixed(3)}×`,
    '<= 1.1x',
  ]);

  const small = await batch(2000, 64, 0);
  const large = await batch(20000, 64, 0);
  if (small.lines !== 2000 || large.lines !== 20000) throw new Error('a batch did not print every line');
  rows.push([
    'peak RSS, 20,000 items vs 2,000 (answered at once)',
    `${(large.rssKb / 1024).toFixed(1)} MB vs ${(small.rssKb / 1024).toFixed(1)} MB`,
    `${(large.rssKb / small.rssKb).toFixed(3)}×`,
    '<= 1.3x',
  ]);
  rows.push([
    'CPU per item (axe process, user + system)',
    `${(small.cpuMs / 2000).toFixed(2)} ms (2,000) / ${(large.cpuMs / 20000).toFixed(2)} ms (20,000)`,
    `start-up ${startup.toFixed(0)} ms`,
    'reported',
  ]);
  const gated = await batch(1000, 64, 0, limited);
  const sent = limited.requests.length;
  rows.push([
    '1,000 items, server limit 50 req/s (429 + retry-after beyond it)',
    `${(gated.ms / 1000).toFixed(2)} s, ${sent - 1000} of ${sent} requests refused (${(((sent - 1000) / sent) * 100).toFixed(1)}%)`,
    `20 s: ${(gated.ms / 20000).toFixed(3)}×`,
    '<= 1.2x, <= 5% refused',
  ]);
  process.stdout.write('\n| row | measured | against | target |\n|---|---|---|---|\n');
  for (const row of rows) process.stdout.write(`| ${row.join(' | ')} |\n`);
} finally {
  await fake.close();
  await limited.close();
  rmSync(home, { recursive: true, force: true });
}
