import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import eventSchema from '../../schemas/run-event.schema.json' with { type: 'json' };
import type { RecordedRequest, ScriptedReply } from '../fake-llm/types.js';
import { agentToml, callAgent, roleOf } from './agents.js';
import { AXE_BIN, e2eHomes, runAxe, startAxe, type TempHome, waitFor } from './cli.js';

/**
 * Every run leaves a record under `<data dir>/runs/<id>/`: `run.json` and a transcript per agent.
 * `axe runs` reads them; `--continue`, `--resume` and call_agent's `resume` pick conversations up.
 */
const setup = e2eHomes();

interface Line {
  type: string;
  path: string;
  parent?: string;
  time: number;
  message?: { role: string; content?: string; toolCalls?: { id: string }[]; results?: { content: string }[] };
  status?: string;
}

/** The lines of each transcript of a run, by agent path. */
function transcripts(home: TempHome, id: string): Map<string, Line[]> {
  const dir = path.join(home.runsDir, id, 'agents');
  const byPath = new Map<string, Line[]>();
  for (const file of readdirSync(dir).sort()) {
    const lines = readFileSync(path.join(dir, file), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Line);
    byPath.set(lines[0]?.path ?? file, lines);
  }
  return byPath;
}

interface JsonNode {
  agent: string;
  status: string;
  input_tokens: number;
  output_tokens: number;
  children: JsonNode[];
}

interface TreeNode {
  path: string;
  agent: string;
  status: string;
  usage: { inputTokens: number; outputTokens: number };
  children: TreeNode[];
}

const flat = (nodes: JsonNode[]): string[] =>
  nodes.flatMap((n) => [`${n.agent}:${n.status}:${n.input_tokens + n.output_tokens}`, ...flat(n.children)]);
const flatTree = (nodes: TreeNode[]): string[] =>
  nodes.flatMap((n) => [
    `${n.agent}:${n.status}:${n.usage.inputTokens + n.usage.outputTokens}`,
    ...flatTree(n.children),
  ]);

/** The messages a request sent (Anthropic wire). */
function bodyMessages(request: RecordedRequest | undefined): { role: string; content: unknown }[] {
  return (request?.body as { messages?: { role: string; content: unknown }[] } | undefined)?.messages ?? [];
}

describe.concurrent('run records', () => {
  it('a rich run: the record tree is --json’s, transcripts hold exactly what the server got and sent, --events validates', async () => {
    const { home, fake } = await setup();
    home.agent('ok', agentToml('ok'));
    home.agent('bad', agentToml('bad'));
    home.agent('slow', agentToml('slow'));
    home.agent('bg', agentToml('bg'));
    home.agent(
      'lead',
      agentToml('lead', {
        subAgents: ['ok', 'bad', 'slow', 'bg'],
        subAgentsConfig: ['background = true', 'timeout = 1'],
      }),
    );
    fake.respond((r) => {
      switch (roleOf(r)) {
        case 'ok':
          return { text: `ok: ${r.lastUserText}` };
        case 'bad':
          return { fault: { kind: 'status', status: 400 } };
        case 'slow':
          return { text: 'too late', delayMs: 3000 };
        case 'bg':
          return { text: 'bg done', delayMs: 200 };
        default:
          if (r.toolResults.length === 0) {
            return {
              text: 'Delegating.',
              toolCalls: [
                {
                  name: 'call_agent',
                  arguments: { agent: 'bg', task: 'background', run_in_background: true },
                },
                callAgent('ok', 'one'),
                callAgent('bad', 'two'),
                callAgent('slow', 'three'),
              ],
            };
          }
          if (r.toolResults.length === 4) {
            return { toolCalls: [{ name: 'task_output', arguments: { agent_id: 'lead/call_agent#1:bg' } }] };
          }
          return { text: 'All done.' };
      }
    });
    const eventsFile = path.join(home.root, 'events.jsonl');
    const result = await runAxe(
      ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--json', '--events', eventsFile],
      { env: home.env(fake.url) },
    );
    expect(result.code, result.stderr).toBe(0);
    const envelope = JSON.parse(result.stdout) as { agents: JsonNode[]; input_tokens: number };
    const [id] = home.runIds();
    expect(id).toMatch(/^\d{8}-\d{6}\.\d{3}-[0-9a-f]{6}$/);
    const record = JSON.parse(readFileSync(path.join(home.runsDir, id as string, 'run.json'), 'utf8'));
    expect(record).toMatchObject({
      status: 'completed',
      exitCode: 0,
      request: { agent: 'lead', input: 'go' },
    });
    // The tree: the same agents, statuses and tokens as --json's.
    expect(flatTree(record.tree.children).sort()).toEqual(flat(envelope.agents).sort());
    expect(
      flat(envelope.agents)
        .map((s) => s.split(':').slice(0, 2).join(':'))
        .sort(),
    ).toEqual(['bad:error', 'bg:completed', 'ok:completed', 'slow:timeout']);
    // The lead's transcript: its last request's messages, then the answer the server sent.
    const lead = transcripts(home, id as string).get('lead') ?? [];
    const told = lead.filter((l) => l.type === 'message').map((l) => l.message);
    const lastRequest = fake.requests.filter((r) => roleOf(r) === 'lead').at(-1) as RecordedRequest;
    const sent = (lastRequest.body as { messages: { role: string }[] }).messages;
    expect(told.length).toBe(sent.length + 1);
    expect(told.at(-1)).toEqual({ role: 'assistant', content: 'All done.' });
    expect(told[0]).toEqual({ role: 'user', content: 'go' });
    const results = told.filter((m) => m?.role === 'tool').flatMap((m) => m?.results?.map((r) => r.content));
    expect(results).toEqual(lastRequest.toolResults.map((r) => r.content));
    // Each child's transcript names its caller.
    for (const [p, lines] of transcripts(home, id as string)) {
      if (p === 'lead') continue;
      expect(lines.every((l) => l.parent === 'lead')).toBe(true);
    }
    // --events: every line matches the schema; every agent starts and ends.
    const validate = new Ajv2020({ strict: false }).compile(eventSchema);
    const events = readFileSync(eventsFile, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Line);
    for (const event of events) expect(validate(event), JSON.stringify(validate.errors)).toBe(true);
    expect(events.filter((e) => e.type === 'agent.start').length).toBe(5);
    expect(
      events
        .filter((e) => e.type === 'agent.end')
        .map((e) => e.status)
        .sort(),
    ).toEqual(['completed', 'completed', 'completed', 'error', 'timeout']);
  });

  it('axe runs list / show / --transcript / rm; ids by prefix and `last`; no record with --no-record-run', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    fake.respond(() => ({ text: 'pong' }));
    const env = home.env(fake.url);
    const run = (extra: string[] = [], more: NodeJS.ProcessEnv = {}) =>
      runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'ping', ...extra], {
        env: { ...env, ...more },
      });
    expect((await run()).code).toBe(0);
    expect((await run(['--no-record-run'])).code).toBe(0);
    expect((await run([], { AXE_NO_RUN_RECORD: '1' })).code).toBe(0);
    const [id] = home.runIds();
    expect(home.runIds()).toHaveLength(1);
    const list = await runAxe(['runs', 'list', '--json'], { env });
    expect(JSON.parse(list.stdout)).toMatchObject([{ id, agent: 'solo', status: 'completed', exit_code: 0 }]);
    const show = await runAxe(['runs', 'show', (id as string).slice(0, 12)], { env });
    expect(show.stdout).toContain(`run ${id}: solo`);
    expect(show.stdout).toMatch(/✓ solo · completed/);
    const transcript = await runAxe(['runs', 'show', 'last', '--transcript', 'solo'], { env });
    expect(transcript.stdout).toMatch(/\[user\]\n {2}ping\n.*\[assistant\]\n {2}pong/);
    const html = await runAxe(['runs', 'show', 'last', '--html'], { env });
    expect(html.stdout).toMatch(/^<!DOCTYPE html>/i);
    expect(html.stdout).toContain('data-kind="agent"');
    const missing = await runAxe(['runs', 'show', 'nope'], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe('axe: no recorded run matches "nope" (see axe runs list)\n');
    // An empty id is no prefix of the only run: nothing is shown or removed.
    for (const action of ['rm', 'show']) {
      expect(await runAxe(['runs', action, ''], { env })).toMatchObject({
        code: 2,
        stdout: '',
        stderr: 'axe: empty run id: expected a run id, a unique prefix of one, or last\n',
      });
    }
    expect(home.runIds()).toEqual([id]);
    expect((await runAxe(['runs', 'rm', 'last'], { env })).code).toBe(0);
    expect(home.runIds()).toEqual([]);
  });

  it('a reader of stdout that went away: exit 141, every event in the record, and run.json says how the process ended', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    const gone = async (answer: string) => {
      fake.respond(() => ({ text: answer }));
      const before = new Set(home.runIds());
      const child = spawn(
        process.execPath,
        [AXE_BIN, 'run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x'],
        {
          env: home.env(fake.url),
          stdio: ['ignore', 'pipe', 'ignore'],
        },
      );
      child.stdout.destroy();
      const code = await new Promise((resolve) => child.on('close', resolve));
      const id = home.runIds().find((run) => !before.has(run)) as string;
      const run = JSON.parse(readFileSync(path.join(home.runsDir, id, 'run.json'), 'utf8'));
      return { code, run, types: [...transcripts(home, id).values()][0]?.map((line) => line.type) };
    };
    // A short answer fails at once, before the record is closed: the lines still waiting are
    // appended as the process exits, and the run shows as interrupted.
    const short = await gone('pong');
    expect(short.code).toBe(141);
    expect(short.types?.at(-1)).toBe('agent.end');
    expect(short.run.status).toBe('running');
    // A long one goes to Node's stream, which fails once the record is closed: its exit code is
    // the process's.
    const long = await gone('line of a long answer\n'.repeat(2000));
    expect(long.code).toBe(141);
    expect(long.types?.at(-1)).toBe('agent.end');
    expect(long.run).toMatchObject({ status: 'completed', exitCode: 141 });
  });

  it('a data dir that cannot be written: one warning, the run and its answer unchanged', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    fake.respond(() => ({ text: 'pong' }));
    const notADir = home.file('data-is-a-file', 'x');
    const result = await runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'ping'], {
      env: home.env(fake.url, { XDG_DATA_HOME: notADir }),
    });
    expect(result).toMatchObject({ code: 0, stdout: 'pong' });
    expect(result.stderr).toMatch(
      /^Warning: run record: cannot write under \S+ \(.*\): this run is not recorded\n$/,
    );
  });

  it('[runs] keep = N keeps exactly the newest N; concurrent runs each get a whole record', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    home.file('config/axe/config.toml', '[runs]\nkeep = 3\n');
    fake.respond((r) => ({ text: `answer to ${r.lastUserText}`, delayMs: 100 }));
    const env = home.env(fake.url);
    const runs = await Promise.all(
      [1, 2, 3, 4, 5].map((n) =>
        runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '-p', `q${n}`], { env }),
      ),
    );
    expect(runs.map((r) => r.code)).toEqual([0, 0, 0, 0, 0]);
    const ids = home.runIds();
    expect(ids).toHaveLength(3);
    for (const id of ids) {
      const record = JSON.parse(readFileSync(path.join(home.runsDir, id, 'run.json'), 'utf8'));
      expect(record.status).toBe('completed');
      const lines = transcripts(home, id).get('solo') ?? [];
      const input = record.request.input as string;
      expect(lines.filter((l) => l.type === 'message').map((l) => l.message?.content)).toEqual([
        input,
        `answer to ${input}`,
      ]);
    }
  });

  it('--continue sends the whole earlier conversation, then the new message', async () => {
    const { home, fake } = await setup();
    home.agent('chat', agentToml('chat'));
    fake.respond((r) => ({ text: `you said ${r.lastUserText}` }));
    const env = home.env(fake.url);
    const first = await runAxe(['run', 'chat', '--agents-dir', home.agentsDir, '-p', 'hello'], { env });
    expect(first.code).toBe(0);
    const second = await runAxe(
      ['run', 'chat', '--agents-dir', home.agentsDir, '--continue', '-p', 'again'],
      {
        env,
      },
    );
    expect(second.stdout).toBe('you said again');
    const third = await runAxe(
      ['run', 'chat', '--agents-dir', home.agentsDir, '--continue', 'last', '-p', 'third'],
      { env },
    );
    expect(third.code).toBe(0);
    const messages = bodyMessages(fake.requests.at(-1));
    const text = (c: unknown) =>
      typeof c === 'string' ? c : (c as { text: string }[]).map((b) => b.text).join('');
    expect(messages.map((m) => `${m.role}:${text(m.content)}`)).toEqual([
      'user:hello',
      'assistant:you said hello',
      'user:again',
      'assistant:you said again',
      'user:third',
    ]);
    const [newest] = home.runIds().reverse();
    const record = JSON.parse(readFileSync(path.join(home.runsDir, newest as string, 'run.json'), 'utf8'));
    expect(record.continuedFrom).toBe(home.runIds()[1]);
    const other = await runAxe(
      ['run', 'chat', '--agents-dir', home.agentsDir, '--continue', 'nope', '-p', 'x'],
      {
        env,
      },
    );
    expect(other.code).toBe(2);
  });

  it('call_agent resume of a sub-agent its turn limit stopped: its last turn is in the conversation', async () => {
    const { home, fake } = await setup();
    home.file('w/a.txt', 'A');
    const helper = ['tools = ["read_file"]', `workdir = "${home.root}/w"`, '', '[budget]', 'max_turns = 1'];
    home.agent('helper', agentToml('helper', { extra: helper }));
    home.agent('lead', agentToml('lead', { subAgents: ['helper'], subAgentsConfig: ['resume = true'] }));
    fake.respond((r) => {
      if (roleOf(r) === 'helper') {
        return r.lastUserText.includes('second')
          ? { text: 'second answer' }
          : { text: 'PARTIAL FINDINGS', toolCalls: [{ name: 'read_file', arguments: { path: 'a.txt' } }] };
      }
      if (r.toolResults.length === 0) return { toolCalls: [callAgent('helper', 'first')] };
      if (r.toolResults.length === 1) {
        const resume = { agent: 'helper', task: 'second', resume: 'lead/call_agent#1:helper' };
        return { toolCalls: [{ name: 'call_agent', arguments: resume }] };
      }
      return { text: 'done' };
    });
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(0);
    const resumed = fake.requests.filter((r) => roleOf(r) === 'helper')[1];
    const text = (c: unknown) =>
      typeof c === 'string' ? c : (c as { text?: string }[]).map((b) => b.text ?? '').join('');
    // Its calls went unanswered: the turn is its text.
    expect(bodyMessages(resumed).map((m) => `${m.role}:${text(m.content)}`)).toEqual([
      'user:Task: first',
      'assistant:PARTIAL FINDINGS',
      'user:Task: second',
    ]);
  });

  it('call_agent resume: <agent_id> continues that sub-agent’s conversation; an unknown id is an error result', async () => {
    const { home, fake } = await setup();
    home.agent('helper', agentToml('helper'));
    home.agent(
      'lead',
      agentToml('lead', {
        subAgents: ['helper'],
        subAgentsConfig: ['result_format = "json"', 'resume = true'],
      }),
    );
    fake.respond((r) => {
      if (roleOf(r) === 'helper') return { text: `helper heard ${r.lastUserText}` };
      switch (r.toolResults.length) {
        case 0:
          return { toolCalls: [callAgent('helper', 'first')] };
        case 1:
          return {
            toolCalls: [
              {
                name: 'call_agent',
                arguments: { agent: 'helper', task: 'second', resume: 'lead/call_agent#1:helper' },
              },
              {
                name: 'call_agent',
                arguments: { agent: 'helper', task: 'x', resume: 'lead/call_agent#9:helper' },
              },
            ],
          };
        default:
          return { text: 'done' };
      }
    });
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
    });
    expect(result.code, result.stderr).toBe(0);
    expect(fake.requests.filter((r) => roleOf(r) === 'lead')[0]?.body).toMatchObject({
      tools: [{ name: 'call_agent', input_schema: { properties: { resume: { type: 'string' } } } }],
    });
    const helper = fake.requests.filter((r) => roleOf(r) === 'helper');
    expect(helper).toHaveLength(2);
    const messages = bodyMessages(helper[1]);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(JSON.stringify(messages)).toContain('helper heard Task: first');
    const last = fake.requests.filter((r) => roleOf(r) === 'lead').at(-1)?.toolResults ?? [];
    expect(JSON.parse(last[1]?.content ?? '{}')).toMatchObject({
      status: 'completed',
      result: 'helper heard Task: second',
    });
    expect(last[2]).toMatchObject({
      isError: true,
      content:
        'call_agent error: no finished sub-agent with agent_id "lead/call_agent#9:helper" to resume in this run',
    });
  });

  it('SIGKILL mid fan-out: the record says where it stopped; --resume finishes it without asking completed children again', async () => {
    const { home, fake } = await setup();
    home.agent('worker', agentToml('worker'));
    home.agent('lead', agentToml('lead', { subAgents: ['worker'] }));
    let killed = false;
    fake.respond((r): ScriptedReply => {
      if (roleOf(r) === 'worker') {
        const slow = r.lastUserText.includes('slow') && !killed;
        return slow ? { fault: { kind: 'hang' } } : { text: `done ${r.lastUserText}` };
      }
      if (r.toolResults.length === 0) {
        return { toolCalls: ['a', 'b', 'slow'].map((t) => callAgent('worker', t)) };
      }
      return { text: `lead: ${r.toolResults.map((t) => t.content).join(' | ')}` };
    });
    const env = home.env(fake.url);
    const axe = startAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], { env });
    const workers = () => fake.requests.filter((r) => roleOf(r) === 'worker');
    await waitFor(
      () => workers().length === 3 && workers().filter((w) => w.finishedAt !== undefined).length >= 2,
    );
    // The record of the two that finished is appended within 50 ms.
    await new Promise((resolve) => setTimeout(resolve, 150));
    const early = await runAxe(['run', '--resume', 'last'], { env });
    expect(early.code).toBe(2);
    expect(early.stderr).toMatch(/^axe: --resume: run \S+ is still running \(pid \d+\)\n$/);
    axe.kill('SIGKILL');
    await axe.done;
    killed = true;
    const show = await runAxe(['runs', 'show', 'last'], { env });
    expect(show.stdout).toContain('interrupted (the process is gone)');
    expect(show.stdout).toMatch(/✓ call_agent#1:worker · completed/);
    expect(show.stdout).toMatch(/… call_agent#3:worker · stopped .* in turn 1/);
    expect(show.stdout).toMatch(/… lead · stopped .* in turn 1, in call_agent/);
    const before = workers().length;
    const resumed = await runAxe(['run', '--resume', 'last'], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toBe('lead: done Task: a | done Task: b | done Task: slow');
    // Only the worker that had not finished was asked again; the lead's first turn was not re-sent.
    expect(
      workers()
        .slice(before)
        .map((w) => w.lastUserText),
    ).toEqual(['Task: slow']);
    const leadRequests = fake.requests.filter((r) => roleOf(r) === 'lead');
    expect(leadRequests).toHaveLength(2);
    const ids = home.runIds();
    const record = JSON.parse(readFileSync(path.join(home.runsDir, ids[1] as string, 'run.json'), 'utf8'));
    expect(record).toMatchObject({ resumedFrom: ids[0], status: 'completed' });
    // A completed run has nothing to resume; a changed agent file is refused without --force.
    const again = await runAxe(['run', '--resume', 'last'], { env });
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/completed; nothing to resume/);
  });

  it('--resume refuses an agent file that changed since, unless --force', async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead'));
    fake.respond(() => ({ fault: { kind: 'status', status: 400 } }));
    const env = home.env(fake.url);
    const failed = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], { env });
    expect(failed.code).not.toBe(0);
    home.agent('lead', `${agentToml('lead')}description = "changed"\n`);
    fake.respond(() => ({ text: 'now it works' }));
    const refused = await runAxe(['run', '--resume', 'last'], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/lead\.toml changed since run .*--force resumes anyway/);
    const forced = await runAxe(['run', '--resume', 'last', '--force'], { env });
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toBe('now it works');
  });
});
