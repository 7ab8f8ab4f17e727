/**
 * Prompt caching's effect on cost (`node bench/run.mjs cost`), measured on the built CLI against the
 * fake LLM server's prompt cache (test/fake-llm/cache.ts), from the token counts axe reports in
 * `--json` (the fake counts a token per 4 bytes of each request block):
 *   - a 20-turn tool loop: a ~3,000-token system prompt + tools, 19 read_file calls each answered
 *     with a ~2,000-token file, then the answer; on Anthropic and Bedrock (breakpoints by default:
 *     a Markdown agent), OpenAI and Gemini (their automatic caches); target ≤ 25% of the uncached
 *     cost on Anthropic/Bedrock, ≤ 60% on OpenAI;
 *   - a one-turn run without tools: no breakpoint, so no more than without caching.
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
writeFileSync(path.join(home, 'config', 'axe', 'config.toml'), `[providers.myresp]\napi = "responses"\n`);
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
for (const { wire, model } of WIRES) {
  markdown(`loop-${wire}`, model, 'read_file');
  markdown(`once-${wire}`, model, '[]');
}

function responder(request: RecordedRequest): ScriptedReply {
  if (/ROLE:once/.test(request.system)) return { text: 'one answer' };
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

function run(agent: string): Promise<Tokens> {
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
      else resolve(JSON.parse(stdout) as Tokens);
    });
  });
}

const rows: string[][] = [];
const number = (n: number) => Math.round(n).toLocaleString('en-US');
try {
  for (const { wire, write, read, target } of WIRES) {
    for (const scenario of ['loop', 'once'] as const) {
      fake.clearCache();
      const before = fake.requests.length;
      const tokens = await run(`${scenario}-${wire}`);
      const turns = fake.requests.length - before;
      const prompt = tokens.input_tokens + tokens.cache_read_tokens + tokens.cache_write_tokens;
      const uncached = prompt + tokens.output_tokens;
      const billed =
        tokens.input_tokens +
        write * tokens.cache_write_tokens +
        read * tokens.cache_read_tokens +
        tokens.output_tokens;
      const ratio = billed / uncached;
      const goal = scenario === 'once' ? 1 : target;
      rows.push([
        wire,
        scenario === 'loop' ? `${turns}-turn tool loop` : 'one turn, no tools',
        number(prompt),
        number(tokens.cache_read_tokens),
        number(tokens.cache_write_tokens),
        number(uncached),
        number(billed),
        `${(ratio * 100).toFixed(1)}%`,
        goal === undefined ? '-' : `≤ ${goal * 100}% ${ratio <= goal ? 'ok' : 'MISSED'}`,
      ]);
    }
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
];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
console.log('Prompt caching: billed-token equivalents from the --json counts, against the fake prompt cache');
console.log(line(header));
console.log(line(widths.map((w) => '-'.repeat(w))));
for (const row of rows) console.log(line(row));
