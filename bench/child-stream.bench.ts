/**
 * Children streaming, measured on the built CLI against the fake LLM server: a `spawn_agents`
 * fan-out of 32 workers, each answering 40 lines after 500 ms, run with `--stream --events FILE`
 * and with `--no-stream --events FILE`, 11 runs of each, interleaved. For each: the median wall
 * time, axe's CPU time (user + system, from the shell's `times`), and the size of the events file
 * (lines, bytes, and the lines that are a sub-agent's `text.delta`).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFakeLlm } from '../test/fake-llm/index.js';

const repo = process.env.AXE_REPO ?? process.cwd();
const cli = path.join(repo, 'dist/main.js');
const FAN_OUT = 32;
const CHILD_DELAY_MS = 500;
const LINES = 40;
const RUNS = 11;

const home = mkdtempSync(path.join(os.tmpdir(), 'axe-bench-stream-'));
const agentsDir = path.join(home, 'agents');
mkdirSync(agentsDir);
writeFileSync(
  path.join(agentsDir, 'spawner.toml'),
  [
    'name = "spawner"',
    'model = "anthropic/bench"',
    'system_prompt = "ROLE:spawner"',
    '[sub_agents_config]',
    'spawn = true',
    `max_spawn = ${FAN_OUT}`,
    '',
  ].join('\n'),
);
const answer = Array.from({ length: LINES }, (_, i) => `line ${i}: the worker looked at one more file`).join(
  '\n',
);
const fake = await startFakeLlm({
  respond: (request) => {
    if (request.lastUserText.startsWith('part ')) return { text: answer, delayMs: CHILD_DELAY_MS };
    return request.toolResults.length === 0
      ? {
          toolCalls: [
            {
              name: 'spawn_agents',
              arguments: { tasks: Array.from({ length: FAN_OUT }, (_, i) => ({ task: `part ${i}` })) },
            },
          ],
        }
      : { text: 'merged' };
  },
});

interface Measured {
  wallMs: number;
  cpuMs: number;
  lines: number;
  bytes: number;
  childDeltas: number;
}

async function run(stream: boolean, round: number): Promise<Measured> {
  const events = path.join(home, `events-${stream}-${round}.jsonl`);
  const args = [cli, 'run', 'spawner', '--agents-dir', agentsDir, '-p', 'go', '--events', events];
  args.push(stream ? '--stream' : '--no-stream');
  const quoted = [process.execPath, ...args].map((arg) => `'${arg.replaceAll("'", "'\\''")}'`).join(' ');
  const started = performance.now();
  const child = spawn('bash', ['-c', `${quoted} >/dev/null 2>/dev/null; echo "exit $?"; times`], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: home,
      XDG_CONFIG_HOME: path.join(home, 'config'),
      AXE_ANTHROPIC_BASE_URL: fake.url,
      ANTHROPIC_API_KEY: 'bench-key',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  await new Promise((resolve) => child.on('close', resolve));
  const wallMs = performance.now() - started;
  if (!out.startsWith('exit 0')) throw new Error(`axe run failed: ${out}`);
  const [user, system] = [...(out.split('\n')[2] ?? '').matchAll(/(\d+)m([\d.]+)s/g)].map(
    (m) => (Number(m[1]) * 60 + Number(m[2])) * 1000,
  );
  const text = readFileSync(events, 'utf8');
  const lines = text.split('\n').filter((line) => line !== '');
  rmSync(events);
  return {
    wallMs,
    cpuMs: (user ?? Number.NaN) + (system ?? Number.NaN),
    lines: lines.length,
    bytes: Buffer.byteLength(text),
    childDeltas: lines.filter((line) => line.includes('"type":"text.delta"') && !line.includes('"depth":0'))
      .length,
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
};

try {
  await run(true, -1); // warm-up: the code cache
  const results = { streamed: [] as Measured[], plain: [] as Measured[] };
  for (let round = 0; round < RUNS; round++) {
    results.streamed.push(await run(true, round));
    results.plain.push(await run(false, round));
  }
  const rows = Object.entries(results).map(([name, runs]) => {
    const m = (key: keyof Measured) => median(runs.map((r) => r[key]));
    return `| ${name.padEnd(8)} | ${m('wallMs').toFixed(0)} ms | ${m('cpuMs').toFixed(0)} ms | ${m('lines')} | ${m('bytes')} | ${m('childDeltas')} |`;
  });
  process.stdout.write(
    `spawn_agents ${FAN_OUT} x ${LINES} lines after ${CHILD_DELAY_MS} ms, --events FILE, medians of ${RUNS}\n` +
      '| run      | wall | CPU | event lines | event bytes | child text.delta lines |\n' +
      '|----------|------|-----|-------------|-------------|------------------------|\n' +
      `${rows.join('\n')}\n`,
  );
} finally {
  await fake.close();
  rmSync(home, { recursive: true, force: true });
}
