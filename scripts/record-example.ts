/**
 * Re-records agents/examples/review.cassette.jsonl: runs the BUILT CLI with `--record` against the
 * fake LLM server, which plays the models with the scripted answers below. Run after `npm run build`:
 *
 *   npx esbuild scripts/record-example.ts --bundle --platform=node --format=esm --packages=external \
 *     --outfile=node_modules/.cache/record-example.mjs && node node_modules/.cache/record-example.mjs
 *
 * Then replay it, offline and without a key:
 *
 *   npx axe run team-lead --agents-dir agents/examples \
 *     --replay agents/examples/review.cassette.jsonl < agents/examples/sample.diff
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFakeLlm } from '../test/fake-llm/index.js';
import type { RecordedRequest, ScriptedReply } from '../test/fake-llm/types.js';

const repo = process.cwd();
const examples = path.join(repo, 'agents/examples');
const cassette = path.join(examples, 'review.cassette.jsonl');
const diff = readFileSync(path.join(examples, 'sample.diff'), 'utf8');

const SECURITY_FINDINGS = `- HIGH src/users.ts:7 — SQL injection: \`name\` is interpolated into the query. Fix: use a parameter, \`WHERE name = $1\` with \`[name]\`.
- HIGH src/users.ts:21 — Command injection: \`format\` reaches a shell through \`exec\`. Fix: \`execFile('pg_dump', [...])\` with an allow-list of formats.
- HIGH src/users.ts:4 — A production admin token is committed in the source. Fix: rotate it and read it from the environment or a secret store.
- MEDIUM src/users.ts:12 — The admin check trusts a client header compared with \`==\` to a static token. Fix: authorise on the session's role; use \`crypto.timingSafeEqual\` if a token is unavoidable.
- LOW src/users.ts:21 — The dump goes to world-readable \`/tmp\` under a predictable name. Fix: write to a private directory with mode 0600.`;

const STYLE_FINDINGS = `- src/users.ts:15 — \`catch (e) {}\` swallows a failed delete, so callers cannot tell it from success. Let it propagate or return the failure.
- src/users.ts:11 — \`deleteUser\` now takes a whole HTTP request: data access and authorisation in one function. Keep \`deleteUser(id)\` and authorise in the handler.
- src/users.ts:21 — \`exec\` is neither awaited nor checked: \`exportUsers\` returns before the dump finishes and hides its failure.
- src/users.ts:6 — \`findUser\` changed from an id to a non-unique name and returns \`rows[0]\`; no test pins the new behaviour.
- src/users.ts:20 — \`var d\` → \`const startedAt\` (or \`Date.now()\` inline).
- src/users.ts:12 — \`==\` → \`===\`.`;

const REVIEW = `**Verdict: REQUEST CHANGES**

### Must fix
1. **SQL injection** — \`src/users.ts:7\`: \`name\` is interpolated into the query. Use \`WHERE name = $1\` with \`[name]\`.
2. **Command injection** — \`src/users.ts:21\`: \`format\` reaches a shell through \`exec\`. Use \`execFile\` and allow-list the formats.
3. **Committed secret** — \`src/users.ts:4\`: rotate the committed admin token now and read it from the environment.
4. **Broken admin check** — \`src/users.ts:12\`: a static header token compared with \`==\` is not authorisation. Check the caller's role from the session.
5. **Swallowed error** — \`src/users.ts:15\`: a failed delete looks like a success. Let it propagate.

### Nice to have
- \`src/users.ts:11\`: keep \`deleteUser(id)\` free of HTTP types; authorise in the handler.
- \`src/users.ts:21\`: await \`pg_dump\`, report its failure, and write the dump to a private directory, not \`/tmp\`.
- \`src/users.ts:6\`: \`findUser\` now matches a non-unique name — add a test for the intended behaviour.
- \`src/users.ts:20\`: \`var d\` → \`const startedAt\`.
`;

function reply(request: RecordedRequest): ScriptedReply {
  if (request.system.startsWith('You are an application security reviewer')) {
    return { text: SECURITY_FINDINGS, usage: { input: 612, output: 241 } };
  }
  if (request.system.startsWith('You are a senior engineer reviewing a diff')) {
    return { text: STYLE_FINDINGS, usage: { input: 598, output: 236 } };
  }
  if (request.toolResults.length === 0) {
    return {
      text: 'I will have the security and style specialists review this diff in parallel.',
      toolCalls: [
        {
          name: 'call_agent',
          arguments: {
            agent: 'security-reviewer',
            task: 'Review this diff for security problems.',
            context: diff,
          },
        },
        {
          name: 'call_agent',
          arguments: {
            agent: 'style-reviewer',
            task: 'Review this diff for readability and style.',
            context: diff,
          },
        },
      ],
      usage: { input: 1180, output: 402 },
    };
  }
  return { text: REVIEW, usage: { input: 2215, output: 388 } };
}

const fake = await startFakeLlm({ respond: reply });
const home = mkdtempSync(path.join(os.tmpdir(), 'axe-record-example-'));
try {
  // Async: the fake server lives in this process and must keep answering while the CLI runs.
  const child = spawn(
    process.execPath,
    ['dist/main.js', 'run', 'team-lead', '--agents-dir', 'agents/examples', '--record', cassette],
    {
      cwd: repo,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        XDG_CONFIG_HOME: path.join(home, 'config'),
        AXE_ANTHROPIC_BASE_URL: fake.url,
        ANTHROPIC_API_KEY: 'recording-key',
      },
    },
  );
  child.stdout.resume();
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  child.stdin.end(diff);
  const status = await new Promise<number | null>((resolve) => child.on('close', resolve));
  const result = { status, stderr };
  if (result.status !== 0) throw new Error(`recording failed (exit ${result.status}): ${result.stderr}`);
  if (fake.rejections.length > 0)
    throw new Error(`the fake server refused: ${fake.rejections[0]?.rejection}`);
  process.stdout.write(`recorded ${fake.requests.length} exchanges to ${path.relative(repo, cassette)}\n`);
} finally {
  await fake.close();
  rmSync(home, { recursive: true, force: true });
}
