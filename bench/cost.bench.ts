/**
 * Prompt caching's effect on cost (`node bench/run.mjs cost`), measured on the built CLI against the
 * fake LLM server's prompt cache (test/fake-llm/cache.ts), from the token counts axe reports in
 * `--json` (the fake counts a token per 4 bytes of each request block):
 *   - a 20-turn tool loop: a ~3,000-token system prompt + tools, 19 read_file calls each answered
 *     with a ~2,000-token file, then the answer; on Anthropic and Bedrock (breakpoints by default:
 *     a Markdown agent), OpenAI and Gemini (their automatic caches); target ≤ 25% of the uncached
 *     cost on Anthropic/Bedrock, ≤ 60% on OpenAI;
 *   - a one-turn run without tools: no breakpoint, so no more than without caching;
 *   - a 16-way fan-out on Anthropic: a parent starts 16 children with the same ~3,000-token prompt
 *     (each answering 200 ms after its request, as a model's first token would), with
 *     `cache_warmup` and without; the children's prompts (the shared prefix and each task) against
 *     their uncached cost, target ≤ 25% with warming, and the run's wall time (the envelope's
 *     duration_ms), medians of 5 runs each, interleaved.
 * Beside them, the dollars `--json` reports (`cost_usd`, `cost_usd_without_cache`) at each model's
 * price from the price table (the Bedrock model, whose id the table does not know, at Bedrock's
 * regional Sonnet 4.5 price through config.toml's `[prices]`).
 * Billed-token equivalent: uncached input + 1.25 × cache writes + 0.1 × cache reads + output on
 * Anthropic and Bedrock; uncached + 0.5 × reads + output on OpenAI; uncached + 0.25 × reads + output
 * on Gemini (its implicit-cache discount). The uncached cost is the same run's whole prompt at full
 * price, plus output.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FAKE_AWS_ACCESS_KEY_ID, FAKE_AWS_SECRET_ACCESS_KEY } from '../test/fake-llm/bedrock-validate.js';
import { startFakeLlm } from '../test/fake-llm/index.js';
import type { RecordedRequest, ScriptedReply } from '../test/fake-llm/types.js';

const repo = process.env.AXE_REPO ?? process.cwd();
const cli = path.join(repo, 'dist/main.js');
const LOOP_TURNS = 20;

const home = mkdtempSync(path.join(os.tmpdir(), 'axe-bench-cost-'));
const agentsDir = path.join(home, 'agents');
const workdir = path.join(home, 'work');
mkdirSync(agentsDir);
mkdirSync(workdir);
mkdirSync(path.join(home, 'config', 'axe'), { recursive: true });
writeFileSync(
  path.join(home, 'config', 'axe', 'config.toml'),
  `[providers.myresp]\napi = "responses"\n\n[prices."bedrock/anthropic.claude-sonnet-4-5-v1:0"]\ninput = 3.3\noutput = 16.5\ncache_read = 0.33\ncache_write = 4.125\n`,
);
/** ~2,000 tokens at 4 bytes a token (read_file adds its line numbers). */
writeFileSync(
  path.join(workdir, 'result.txt'),
  Array.from({ length: 160 }, (_, i) => `line ${i}: the quick brown fox jumps over the lazy dog`).join('\n'),
);
/** ~3,000 tokens with the tools' definitions. */
const PROMPT = 'You review code changes carefully and cite file and line for every finding. '.repeat(150);

function markdown(name: string, model: string, tools: string): void {
  writeFileSync(
    path.join(agentsDir, `${name}.md`),
    `---\nname: ${name}\nmodel: ${model}\ntools: ${tools}\n---\nROLE:${name}\n${PROMPT}\n`,
  );
}

const WIRES = [
  { wire: 'anthropic', model: 'anthropic/claude-sonnet-4-5', write: 1.25, read: 0.1, target: 0.25 },
  {
    wire: 'bedrock',
    model: 'bedrock/anthropic.claude-sonnet-4-5-v1:0',
    write: 1.25,
    read: 0.1,
    target: 0.25,
  },
  { wire: 'openai', model: 'openai/gpt-5', write: 1, read: 0.5, target: 0.6 },
  { wire: 'gemini', model: 'google/gemini-2.5-flash', write: 1, read: 0.25, target: undefined },
] as const;
const FAN_OUT = 16;
const FIRST_TOKEN_MS = 200;
const FAN_RUNS = 5;
for (const warm of [true, false]) {
  writeFileSync(
    path.join(agentsDir, `fan-${warm ? 'warm' : 'cold'}.toml`),
    [
      `name = "fan-${warm ? 'warm' : 'cold'}"`,
      'model = "anthropic/claude-sonnet-4-5"',
      'system_prompt = "ROLE:fan"',
      'sub_agents = ["worker"]',
      '[sub_agents_config]',
      `max_parallel = ${FAN_OUT}`,
      `cache_warmup = ${warm}`,
      '',
    ].join('\n'),
  );
}
writeFileSync(
  path.join(agentsDir, 'worker.md'),
  `---\nname: worker\nmodel: anthropic/claude-sonnet-4-5\ntools: []\n---\nROLE:worker\n${PROMPT}\n`,
);
for (const { wire, model } of WIRES) {
  markdown(`loop-${wire}`, model, 'read_file');
  markdown(`once-${wire}`, model, '[]');
}

function responder(request: RecordedRequest): ScriptedReply {
  if (/ROLE:once/.test(request.system)) return { text: 'one answer' };
  if (/ROLE:worker/.test(request.system)) return { text: 'part done', delayMs: FIRST_TOKEN_MS };
  if (/ROLE:fan/.test(request.system)) {
    return request.toolResults.length === 0
      ? {
          toolCalls: Array.from({ length: FAN_OUT }, (_, i) => ({
            name: 'call_agent',
            arguments: { agent: 'worker', task: `review part ${i + 1}` },
          })),
        }
      : { text: 'merged' };
  }
  return request.toolResults.length < LOOP_TURNS - 1
    ? { toolCalls: [{ name: 'read_file', arguments: { path: 'result.txt' } }] }
    : { text: 'done' };
}

const fake = await startFakeLlm({ cache: true, respond: responder });

function env(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '',
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, 'config'),
    XDG_DATA_HOME: path.join(home, 'data'),
    AXE_ANTHROPIC_BASE_URL: fake.url,
    ANTHROPIC_API_KEY: 'bench-key',
    AXE_OPENAI_BASE_URL: `${fake.url}/v1`,
    OPENAI_API_KEY: 'bench-key',
    AXE_GOOGLE_BASE_URL: fake.url,
    GEMINI_API_KEY: 'bench-key',
    AXE_BEDROCK_BASE_URL: fake.url,
    AWS_ACCESS_KEY_ID: FAKE_AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY: FAKE_AWS_SECRET_ACCESS_KEY,
    AWS_REGION: 'us-east-1',
  };
}

interface Tokens {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
}

interface Dollars {
  cost_usd?: number;
  cost_usd_without_cache?: number;
}

interface Envelope extends Tokens, Dollars {
  duration_ms: number;
  agents: (Tokens & Dollars)[];
}

function run(agent: string): Promise<Envelope> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [cli, 'run', agent, '--agents-dir', agentsDir, '-p', 'go', '--workdir', workdir, '--json'],
      { env: env(), stdio: ['ignore', 'pipe', 'inherit'] },
    );
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) reject(new Error(`${agent}: exit ${code}`));
      else resolve(JSON.parse(stdout) as Envelope);
    });
  });
}

const rows: string[][] = [];
const number = (n: number) => Math.round(n).toLocaleString('en-US');
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

const usd = (value: number | undefined) => (value === undefined ? '-' : `$${value.toFixed(4)}`);

function row(
  wire: string,
  label: string,
  tokens: Tokens & Dollars,
  write: number,
  read: number,
  goal?: number,
): void {
  const prompt = tokens.input_tokens + tokens.cache_read_tokens + tokens.cache_write_tokens;
  const uncached = prompt + tokens.output_tokens;
  const billed =
    tokens.input_tokens +
    write * tokens.cache_write_tokens +
    read * tokens.cache_read_tokens +
    tokens.output_tokens;
  const ratio = billed / uncached;
  rows.push([
    wire,
    label,
    number(prompt),
    number(tokens.cache_read_tokens),
    number(tokens.cache_write_tokens),
    number(uncached),
    number(billed),
    `${(ratio * 100).toFixed(1)}%`,
    goal === undefined ? '-' : `≤ ${goal * 100}% ${ratio <= goal ? 'ok' : 'MISSED'}`,
    usd(tokens.cost_usd),
    usd(tokens.cost_usd_without_cache),
  ]);
}

function sumTokens(nodes: (Tokens & Dollars)[]): Tokens & Dollars {
  const sum = (key: keyof (Tokens & Dollars)) => nodes.reduce((total, node) => total + (node[key] ?? 0), 0);
  return {
    input_tokens: sum('input_tokens'),
    output_tokens: sum('output_tokens'),
    cache_read_tokens: sum('cache_read_tokens'),
    cache_write_tokens: sum('cache_write_tokens'),
    ...(nodes.every((node) => node.cost_usd !== undefined)
      ? { cost_usd: sum('cost_usd'), cost_usd_without_cache: sum('cost_usd_without_cache') }
      : {}),
  };
}

const wall: Record<'warm' | 'cold', number[]> = { warm: [], cold: [] };
try {
  for (const { wire, write, read, target } of WIRES) {
    for (const scenario of ['loop', 'once'] as const) {
      fake.clearCache();
      const before = fake.requests.length;
      const tokens = await run(`${scenario}-${wire}`);
      const turns = fake.requests.length - before;
      const label = scenario === 'loop' ? `${turns}-turn tool loop` : 'one turn, no tools';
      row(wire, label, tokens, write, read, scenario === 'once' ? 1 : target);
    }
  }
  const children: Record<'warm' | 'cold', (Tokens & Dollars) | undefined> = {
    warm: undefined,
    cold: undefined,
  };
  for (let i = 0; i < FAN_RUNS; i++) {
    for (const kind of ['warm', 'cold'] as const) {
      fake.clearCache();
      const envelope = await run(`fan-${kind}`);
      wall[kind].push(envelope.duration_ms);
      children[kind] = sumTokens(envelope.agents);
    }
  }
  for (const kind of ['warm', 'cold'] as const) {
    const tokens = children[kind];
    const label = `${FAN_OUT}-way fan-out, ${kind === 'warm' ? 'cache_warmup' : 'no warmup'}`;
    if (tokens) row('anthropic', label, tokens, 1.25, 0.1, kind === 'warm' ? 0.25 : undefined);
  }
} finally {
  await fake.close();
  rmSync(home, { recursive: true, force: true });
}

const header = [
  'wire',
  'run',
  'prompt tokens',
  'read',
  'written',
  'uncached cost',
  'with caching',
  'ratio',
  'target',
  'USD',
  'USD without caching',
];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
console.log('Prompt caching: billed-token equivalents from the --json counts, against the fake prompt cache');
console.log(line(header));
console.log(line(widths.map((w) => '-'.repeat(w))));
for (const cells of rows) console.log(line(cells));
console.log(
  `${FAN_OUT}-way fan-out wall time (children answer ${FIRST_TOKEN_MS} ms after their request), medians of ${FAN_RUNS}: ` +
    `cache_warmup ${median(wall.warm)} ms, without ${median(wall.cold)} ms`,
);
