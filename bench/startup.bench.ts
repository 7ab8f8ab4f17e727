// What one invocation of the CLI costs, each against the floor of starting Node at all (`node -e 0`)
// and, for a model turn, against a bare `node:http` client sending axe's exact request to the same
// local server and reading the answer: `axe version`, `axe agents list` over 50 files,
// `--dry-run`, one turn on the Anthropic and the OpenAI wire (and one traced, its spans sent over OTLP). `agents list` lists the same
// unchanged files each time, as a user does (axe keeps their data: internal/agent/file-cache.ts),
// and once more with that cache removed before each run. Medians of interleaved rounds after
// a warm-up (which also writes the code caches), so load swings hit every command alike; peak RSS
// from a separate pass (a preload script reports `maxRSS` at exit, so the timed runs carry nothing
// extra).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeLlm } from '../test/fake-llm/index.js';
import { startOtlpReceiver } from '../test/telemetry/otlp-receiver.js';
import { benchEnv } from './home.js';

const ROUNDS = 15;
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
const soloDir = join(home, 'solo');
mkdirSync(soloDir);
writeFileSync(join(soloDir, 'solo.toml'), 'name = "solo"\nmodel = "anthropic/claude-sonnet-4-5"\n');
writeFileSync(join(soloDir, 'solo-openai.toml'), 'name = "solo-openai"\nmodel = "openai/gpt-5"\n');

const fake = await startFakeLlm({ respond: () => ({ text: 'pong' }) });
// Traced runs send their spans here (OTLP http/protobuf, the default protocol).
const collector = await startOtlpReceiver();
const env = benchEnv(home, fake.url, { AXE_OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'bench-key' });

/** The bare client: POSTs a recorded request's body and headers with `node:http`, prints the answer's size. */
const bare = join(home, 'bare.mjs');
writeFileSync(
  bare,
  `import http from 'node:http';
const { url, headers, body } = JSON.parse(process.argv[2]);
const sent = http.request(url, { method: 'POST', headers }, (response) => {
  let size = 0;
  response.on('data', (chunk) => { size += chunk.length; });
  response.on('end', () => process.stdout.write(String(size)));
});
sent.end(body);
`,
);
const rssPreload = join(home, 'rss.cjs');
writeFileSync(
  rssPreload,
  `process.on('exit', () => require('node:fs').writeFileSync(process.env.RSS_LOG, String(process.resourceUsage().maxRSS)));\n`,
);

function run(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, args, { env: { ...env, ...extraEnv }, cwd: home }, (error, stdout, stderr) =>
      error ? reject(new Error(`${args.join(' ')}: ${stderr || error.message}`)) : resolve(stdout),
    ),
  );
}

/** axe's exact request of a one-turn run on `agent`, for the bare client to send. */
async function recordedRequest(agent: string): Promise<string> {
  fake.reset();
  fake.respond(() => ({ text: 'pong' }));
  await run([cli, 'run', agent, '--agents-dir', soloDir, '-p', 'ping']);
  const request = fake.requests[0];
  if (!request) throw new Error(`no request from ${agent}`);
  const headers = Object.fromEntries(
    Object.entries(request.headers).filter(
      ([name]) => !['host', 'connection', 'content-length'].includes(name),
    ),
  );
  const query = new URLSearchParams(request.query).toString();
  return JSON.stringify({
    url: `${fake.url}${request.path}${query ? `?${query}` : ''}`,
    headers,
    body: JSON.stringify(request.body),
  });
}

interface Row {
  what: string;
  args: string[];
  env?: NodeJS.ProcessEnv;
  /** Ratio against this row's median (default: the floor). */
  against?: string;
  /** Done before each run of the row, untimed. */
  before?: () => void;
  target?: string;
}

const rows: Row[] = [
  { what: 'node -e 0 (floor)', args: ['-e', '0'] },
  { what: 'bare node:http client, Anthropic request', args: [bare, await recordedRequest('solo')] },
  { what: 'bare node:http client, OpenAI request', args: [bare, await recordedRequest('solo-openai')] },
  { what: 'axe version', args: [cli, 'version'], target: '<= 1.2x' },
  { what: 'axe agents list (50 files)', args: [cli, 'agents', 'list'], target: '<= 1.5x' },
  {
    what: 'axe agents list (50 files), none kept from the last listing',
    args: [cli, 'agents', 'list'],
    before: () => rmSync(join(home, 'cache', 'axe', 'agent-files'), { recursive: true, force: true }),
    target: 'the agent file cache: this row less the row above',
  },
  {
    what: 'axe run --dry-run',
    args: [cli, 'run', 'solo', '--agents-dir', soloDir, '-p', 'ping', '--dry-run'],
    target: '<= 1.5x',
  },
  {
    what: 'axe run: one turn, Anthropic',
    args: [cli, 'run', 'solo', '--agents-dir', soloDir, '-p', 'ping'],
    against: 'bare node:http client, Anthropic request',
    target: '<= 1.5x bare',
  },
  {
    what: 'axe run: one turn, Anthropic, --no-record-run',
    args: [cli, 'run', 'solo', '--agents-dir', soloDir, '-p', 'ping', '--no-record-run'],
    against: 'bare node:http client, Anthropic request',
    target: 'the record: the row above less this one',
  },
  {
    what: 'axe run: one turn, Anthropic, AXE_NO_CODE_CACHE=1 (as a first run)',
    args: [cli, 'run', 'solo', '--agents-dir', soloDir, '-p', 'ping'],
    env: { AXE_NO_CODE_CACHE: '1' },
    against: 'bare node:http client, Anthropic request',
    target: 'the code cache: this row less the first one-turn row',
  },
  {
    what: 'axe run: one turn, Anthropic, traced (OTLP http/protobuf to a loopback collector)',
    args: [cli, 'run', 'solo', '--agents-dir', soloDir, '-p', 'ping'],
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url },
    against: 'bare node:http client, Anthropic request',
    target: 'tracing: this row less the first one-turn row',
  },
  {
    what: 'axe run: one turn, OpenAI',
    args: [cli, 'run', 'solo-openai', '--agents-dir', soloDir, '-p', 'ping'],
    against: 'bare node:http client, OpenAI request',
    target: '<= 1.5x bare',
  },
];

try {
  const listed = await run([cli, 'agents', 'list']);
  if (listed.trim().split('\n').length !== 50) throw new Error(`agents list printed:\n${listed}`);
  const times: number[][] = rows.map(() => []);
  for (let round = -2; round < ROUNDS; round++) {
    for (const [index, row] of rows.entries()) {
      row.before?.();
      const start = process.hrtime.bigint();
      await run(row.args, row.env);
      if (round >= 0) times[index]?.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
  }
  const medians = times.map((list) => {
    const sorted = [...list].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
  });
  const rssLog = join(home, 'rss.txt');
  const rss = [];
  for (const row of rows) {
    const peaks: number[] = [];
    for (let i = 0; i < 3; i++) {
      row.before?.();
      await run(row.args, { ...row.env, NODE_OPTIONS: `--require ${rssPreload}`, RSS_LOG: rssLog });
      peaks.push(Number(readFileSync(rssLog, 'utf8')));
    }
    rss.push(Math.max(...peaks) / 1024);
  }
  const floor = medians[0] ?? Number.NaN;
  console.log(`| command | median of ${ROUNDS} (ms) | ratio | peak RSS (MB) | target |`);
  console.log('|---|---:|---:|---:|---|');
  for (const [index, row] of rows.entries()) {
    const base = row.against ? (medians[rows.findIndex((r) => r.what === row.against)] ?? floor) : floor;
    const ms = medians[index] ?? Number.NaN;
    const ratio = index === 0 ? '' : `${(ms / base).toFixed(2)}x${row.against ? ' bare' : ''}`;
    console.log(
      `| ${row.what} | ${ms.toFixed(1)} | ${ratio} | ${(rss[index] ?? 0).toFixed(0)} | ${row.target ?? ''} |`,
    );
  }
} finally {
  await fake.close();
  await collector.close();
  rmSync(home, { recursive: true, force: true });
}
