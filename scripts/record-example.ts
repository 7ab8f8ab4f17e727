/**
 * Re-records the example cassettes of agents/examples — review (team-lead: call_agent), audit
 * (auditor: spawn_agents) and fix-plan (fix-planner: delegate_task) —: runs the BUILT CLI with
 * `--record` against the fake LLM server, which plays the models with the scripted answers below.
 * Run after `npm run build`:
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

const AUDIT_ANGLES = {
  correctness: `- src/users.ts:15 — \`catch (e) {}\` turns a failed delete into a silent success. Let the error propagate.
- src/users.ts:21 — \`exec\` is not awaited: \`exportUsers\` returns before the dump exists and hides its failure. Await it and check the exit status.
- src/users.ts:6 — \`findUser\` now matches a non-unique name and returns the first row. Keep the lookup by id, or return every match.`,
  security: `- src/users.ts:7 — SQL injection through \`name\`. Use \`WHERE name = $1\` with \`[name]\`.
- src/users.ts:21 — Command injection through \`format\`. Use \`execFile\` with an allow-list of formats.
- src/users.ts:4 — A production admin token is committed. Rotate it and read it from the environment.`,
  tests: `- src/users.ts:6 — No test covers the new name lookup; add one with two users of the same name.
- src/users.ts:11 — No test covers the admin check; add one for a missing, a wrong and a right token.
- src/users.ts:19 — No test covers \`exportUsers\`; add one that fails on an unknown format.`,
};

const AUDIT = `Nine findings from three angles: two injections and a committed secret come first.

**Security**
1. src/users.ts:7 — SQL injection through \`name\`: bind it as \`$1\`.
2. src/users.ts:21 — Command injection through \`format\`: \`execFile\` with an allow-list.
3. src/users.ts:4 — Committed admin token: rotate it, read it from the environment.

**Correctness**
1. src/users.ts:15 — A failed delete is swallowed: let it propagate.
2. src/users.ts:21 — \`exec\` is not awaited: await it and check the exit status.
3. src/users.ts:6 — The lookup by a non-unique name returns an arbitrary row.

**Tests**
1. src/users.ts:6, :11, :19 — The name lookup, the admin check and the export have no tests.
`;

function auditReply(request: RecordedRequest): ScriptedReply {
  const angle = /^Angle: (\w+)/.exec(request.lastUserText)?.[1] as keyof typeof AUDIT_ANGLES | undefined;
  if (angle) return { text: AUDIT_ANGLES[angle], usage: { input: 640, output: 160 } };
  if (request.toolResults.length === 0) {
    return {
      text: 'I will audit this change from three angles at once.',
      toolCalls: [
        {
          name: 'spawn_agents',
          arguments: {
            tasks: (['correctness', 'security', 'tests'] as const).map((a) => ({
              task: `Angle: ${a}\n\n${diff}`,
            })),
          },
        },
      ],
      usage: { input: 980, output: 420 },
    };
  }
  return { text: AUDIT, usage: { input: 1820, output: 310 } };
}

const FIX_PLAN = `1. src/users.ts:4 — Rotate the committed admin token today; read it from \`process.env.ADMIN_TOKEN\`.
2. src/users.ts:7 — Bind \`name\` as a parameter: \`WHERE name = $1\` with \`[name]\`.
3. src/users.ts:21 — Replace \`exec\` with \`execFile('pg_dump', [...])\`, allow-list \`format\`, await it and write to a private directory.
4. src/users.ts:12 — Authorise deletes from the session's role instead of a header token.
5. src/users.ts:15 — Remove the empty \`catch\`: a failed delete must reach the caller.
6. src/users.ts:11 — Keep \`deleteUser(id)\`; move the request handling into the HTTP handler.
7. src/users.ts:20 — \`var d\` → \`const startedAt\`; \`==\` → \`===\`.`;

function fixPlanReply(request: RecordedRequest): ScriptedReply {
  if (request.system.startsWith('You are an application security reviewer')) {
    return { text: SECURITY_FINDINGS, usage: { input: 640, output: 241 } };
  }
  if (request.system.startsWith('You are a senior engineer reviewing a diff')) {
    return { text: STYLE_FINDINGS, usage: { input: 626, output: 236 } };
  }
  if (request.lastUserText.startsWith('Task: Write the fix plan')) {
    return { text: FIX_PLAN, usage: { input: 1310, output: 298 } };
  }
  if (request.toolResults.length === 0) {
    const review = (what: string) => `${what} of this diff:\n\n${diff}`;
    return {
      text: 'I will run both reviews in parallel, then write one fix plan from them.',
      toolCalls: [
        {
          name: 'delegate_task',
          arguments: {
            plan: 'Plan the fixes for the users.ts change',
            subtasks: [
              { task: review('Security review'), agent: 'security-reviewer', scope: 'src/users.ts' },
              { task: review('Style review'), agent: 'style-reviewer', scope: 'src/users.ts' },
              { task: 'Write the fix plan from the two reviews', depends_on: [0, 1] },
            ],
          },
        },
      ],
      usage: { input: 1150, output: 530 },
    };
  }
  return {
    text: `Seven fixes, the committed token first.\n\n${FIX_PLAN}\n`,
    usage: { input: 2480, output: 330 },
  };
}

/** Runs `agent` over the sample diff with `--record` into `file`, the fake server playing `reply`. */
async function record(agent: string, file: string, respond: (r: RecordedRequest) => ScriptedReply) {
  const cassette = path.join(examples, file);
  rmSync(cassette, { force: true });
  const fake = await startFakeLlm({ respond });
  const home = mkdtempSync(path.join(os.tmpdir(), 'axe-record-example-'));
  try {
    // Async: the fake server lives in this process and must keep answering while the CLI runs.
    const child = spawn(
      process.execPath,
      ['dist/main.js', 'run', agent, '--agents-dir', 'agents/examples', '--record', cassette],
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
    if (status !== 0) throw new Error(`recording ${agent} failed (exit ${status}): ${stderr}`);
    if (fake.rejections.length > 0)
      throw new Error(`the fake server refused: ${fake.rejections[0]?.rejection}`);
    process.stdout.write(`recorded ${fake.requests.length} exchanges to ${path.relative(repo, cassette)}\n`);
  } finally {
    await fake.close();
    rmSync(home, { recursive: true, force: true });
  }
}

await record('team-lead', 'review.cassette.jsonl', reply);
await record('auditor', 'audit.cassette.jsonl', auditReply);
await record('fix-planner', 'fix-plan.cassette.jsonl', fixPlanReply);
