import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentToml, allArrived, callAgent, delegatingParent, roleOf } from './agents.js';
import { e2eHomes, lines, runAxe, waitFor } from './cli.js';

/**
 * `axe run` end to end: the built binary in a temp XDG home against the fake LLM server. Every
 * case gets its own home and server, so they run concurrently.
 */
const setup = e2eHomes();

describe.concurrent('axe run', () => {
  it('offers no tools key without sub_agents, and call_agent only with them', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo')).agent('lead', agentToml('lead', { subAgents: ['helper'] }));
    // A [sub_agents_config] without sub_agents injects nothing; empty content is printed as is.
    home.agent('configured', agentToml('configured', { subAgentsConfig: ['max_depth = 2'] }));
    fake.respond((request) => ({
      text: roleOf(request) === 'configured' ? '' : `${roleOf(request)} answer\n`,
    }));
    const env = home.env(fake.url);
    const solo = await runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'hi'], { env });
    const lead = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'hi'], { env });
    expect(solo).toMatchObject({ code: 0, stdout: 'solo answer\n', stderr: '' });
    expect(lead).toMatchObject({ code: 0, stdout: 'lead answer\n', stderr: '' });
    const configured = await runAxe(['run', 'configured', '--agents-dir', home.agentsDir, '-p', 'hi'], {
      env,
    });
    expect(configured).toMatchObject({ code: 0, stdout: '', stderr: '' });
    expect(fake.requests[2]?.body).not.toHaveProperty('tools');
    const [soloRequest, leadRequest] = fake.requests;
    expect(soloRequest?.body).not.toHaveProperty('tools');
    expect(soloRequest?.toolNames).toEqual([]);
    expect(leadRequest?.toolNames).toEqual(['call_agent']);
    expect(fake.rejections).toEqual([]);
  });

  it('runs the loop: delegates, passes task and context, answers; --json and --verbose report it', async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead', { subAgents: ['helper'] })).agent('helper', agentToml('helper'));
    fake.respond((request) =>
      roleOf(request) === 'helper'
        ? { text: 'helper says hi', usage: { input: 7, output: 3 } }
        : delegatingParent(
            [callAgent('helper', 'check it', 'some context')],
            'final: helper says hi',
          )(request),
    );
    const env = home.env(fake.url);
    const args = ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'];
    const [json, verbose] = await Promise.all([
      runAxe([...args, '--json'], { env }),
      runAxe([...args, '-v'], { env }),
    ]);

    expect(json.code).toBe(0);
    expect(json.stdout.endsWith('\n') && lines(json.stdout)).toHaveLength(1);
    const envelope = JSON.parse(json.stdout);
    expect(envelope).toMatchObject({
      content: 'final: helper says hi',
      model: 'claude-test',
      provider: 'anthropic',
      input_tokens: 300,
      output_tokens: 30,
      stop_reason: 'end_turn',
      tool_calls: 1,
      tool_call_details: [
        {
          name: 'call_agent',
          input: { agent: 'helper', task: 'check it' },
          output: 'helper says hi',
          is_error: false,
        },
      ],
      refused: false,
      retry_attempts: 0,
      agents: [
        { agent: 'helper', depth: 1, status: 'completed', input_tokens: 7, output_tokens: 3, children: [] },
      ],
    });
    expect(envelope.duration_ms).toBeGreaterThanOrEqual(0);
    expect(envelope).not.toHaveProperty('budget_max_tokens');

    const helperRequest = fake.requests.find((r) => roleOf(r) === 'helper');
    expect(helperRequest?.lastUserText).toBe('Task: check it\n\nContext:\nsome context');
    expect(helperRequest?.toolNames).toEqual([]);
    const secondTurn = fake.requests.find((r) => roleOf(r) === 'lead' && r.toolResults.length > 0);
    expect(secondTurn?.toolResults).toMatchObject([{ content: 'helper says hi' }]);

    expect(verbose.code).toBe(0);
    expect(verbose.stdout).toBe('final: helper says hi');
    const err = lines(verbose.stderr);
    expect(err).toContain('[turn 1] Sending request (1 messages, 0 tool calls pending)');
    expect(err).toContain('[turn 1] Received response: tool_use (1 tool calls)');
    expect(err).toContain('[sub-agent] Calling "helper" (depth 1) with task: check it');
    expect(err.some((l) => /^\[sub-agent\] "helper" completed in \d+ms \(14 chars returned\)$/.test(l))).toBe(
      true,
    );
    expect(err).toContain('[turn 2] Sending request (3 messages, 1 tool calls pending)');
    expect(err).toContain('[turn 2] Received response: end_turn (0 tool calls)');
    expect(err).toContain('Tokens:   300 input, 30 output (cumulative)');
    expect(err).toContain('Stop:     end_turn');
    expect(err.some((l) => /^Duration: \d+ms$/.test(l))).toBe(true);
  });

  it('--verbose reports built-in tool calls as [tool] lines', async () => {
    const { home, fake } = await setup();
    home.file('work/notes.txt', 'remember the milk');
    home.agent(
      'reader',
      agentToml('reader', {
        extra: ['tools = ["read_file"]', `workdir = "${path.join(home.root, 'work')}"`],
      }),
    );
    fake.respond((request) =>
      request.toolResults.length === 0
        ? { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] }
        : { text: `read: ${request.toolResults[0]?.isError ? 'error' : 'ok'}` },
    );
    const result = await runAxe(['run', 'reader', '--agents-dir', home.agentsDir, '-p', 'x', '-v'], {
      env: home.env(fake.url),
    });
    expect(result).toMatchObject({ code: 0, stdout: 'read: ok' });
    expect(lines(result.stderr).filter((l) => l.startsWith('[tool]'))).toEqual([
      '[tool] read_file: path "notes.txt" (1 lines) (success)',
    ]);
  });

  it('stops after 50 turns with exit 1; an unknown tool is an error result, not a crash', async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead', { subAgents: ['helper'] }));
    fake.respond(() => ({ toolCalls: [{ name: 'no_such_tool', arguments: {} }] }));
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'loop'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(lines(result.stderr)).toEqual(['axe: agent exceeded maximum conversation turns (50)']);
    expect(fake.requests).toHaveLength(50);
    expect(fake.requests[1]?.toolResults).toMatchObject([
      { content: 'Unknown tool: "no_such_tool"', isError: true },
    ]);
  });

  it('limits depth: default 3, max_depth = 5 at most; the agent at the limit gets no tools', async () => {
    // Each chain's last agent lists a sub-agent too: at the depth limit it must still get no tools.
    const dig = async (prefix: string, levels: number, maxDepth?: number) => {
      const { home, fake } = await setup();
      const chain = Array.from({ length: levels + 1 }, (_, i) => `${prefix}${i}`);
      for (const [i, name] of chain.entries()) {
        const subAgentsConfig = i === 0 && maxDepth !== undefined ? [`max_depth = ${maxDepth}`] : undefined;
        home.agent(name, agentToml(name, { subAgents: [chain[i + 1] ?? chain[0] ?? ''], subAgentsConfig }));
      }
      fake.respond((request) => {
        const i = chain.indexOf(roleOf(request));
        const next = chain[i + 1];
        if (next && request.toolNames.length > 0 && request.toolResults.length === 0) {
          return { toolCalls: [callAgent(next, `level ${i + 1}`)] };
        }
        return { text: `${roleOf(request)}(${request.toolResults.map((r) => r.content).join()})` };
      });
      const result = await runAxe(['run', chain[0] ?? '', '--agents-dir', home.agentsDir, '-p', 'dig'], {
        env: home.env(fake.url),
      });
      const tools = Object.fromEntries(fake.requests.map((r) => [roleOf(r), r.toolNames.length > 0]));
      return { result, tools };
    };
    const [byDefault, five] = await Promise.all([dig('d', 3), dig('e', 5, 5)]);
    expect(byDefault.result).toMatchObject({ code: 0, stdout: 'd0(d1(d2(d3())))' });
    expect(byDefault.tools).toEqual({ d0: true, d1: true, d2: true, d3: false });
    expect(five.result).toMatchObject({ code: 0, stdout: 'e0(e1(e2(e3(e4(e5())))))' });
    expect(five.tools).toEqual({ e0: true, e1: true, e2: true, e3: true, e4: true, e5: false });
  });

  it('at the max depth a model that calls call_agent anyway starts no sub-agent: its text is the answer', async () => {
    const { home, fake } = await setup();
    home.agent('top', agentToml('top', { subAgents: ['mid'], subAgentsConfig: ['max_depth = 1'] }));
    home.agent('mid', agentToml('mid', { subAgents: ['low'] }));
    home.agent('low', agentToml('low'));
    fake.respond((request) => {
      if (request.toolResults.length > 0) return { text: `top got: ${request.toolResults[0]?.content}` };
      const next = roleOf(request) === 'top' ? 'mid' : 'low';
      return { text: `${roleOf(request)} text`, toolCalls: [callAgent(next, 'go down')] };
    });
    const result = await runAxe(['run', 'top', '--agents-dir', home.agentsDir, '-p', 'dig'], {
      env: home.env(fake.url),
    });
    expect(result).toMatchObject({ code: 0, stdout: 'top got: mid text' });
    expect(fake.requests.map((r) => [roleOf(r), r.toolNames])).toEqual([
      ['top', ['call_agent']],
      ['mid', []],
      ['top', ['call_agent']],
    ]);
  });

  it('rejects max_depth above 5 with exit 2 naming the field', async () => {
    const { home } = await setup();
    home.agent('deep', agentToml('deep', { subAgents: ['x'], subAgentsConfig: ['max_depth = 6'] }));
    const result = await runAxe(['run', 'deep', '--agents-dir', home.agentsDir, '--dry-run'], {
      env: home.env(),
    });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(lines(result.stderr)).toHaveLength(1);
    expect(result.stderr).toContain('max_depth');
  });

  it('fans out in parallel (overlapping requests, results in call order) and sequentially when parallel = false', async () => {
    const run = async (parallel: boolean) => {
      const { home, fake } = await setup();
      home.agent(
        'lead',
        agentToml('lead', { subAgents: ['slow', 'fast'], subAgentsConfig: [`parallel = ${parallel}`] }),
      );
      home.agent('slow', agentToml('slow')).agent('fast', agentToml('fast'));
      // In parallel, `slow` is answered only after `fast` has been (both are in flight at once).
      const both = allArrived(2);
      fake.respond(async (request) => {
        const role = roleOf(request);
        if (role === 'slow') {
          if (parallel) {
            await both.arrive();
            await waitFor(
              () => fake.requests.some((r) => roleOf(r) === 'fast' && r.finishedAt !== undefined),
              10_000,
            );
          }
          return { text: 'slow result' };
        }
        if (role === 'fast') {
          if (parallel) await both.arrive();
          return { text: 'fast result' };
        }
        const answer = request.toolResults.map((r) => r.content).join(' | ');
        return delegatingParent([callAgent('slow', 'one'), callAgent('fast', 'two')], answer)(request);
      });
      const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'x'], {
        env: home.env(fake.url),
      });
      const slow = fake.requests.find((r) => roleOf(r) === 'slow');
      const fast = fake.requests.find((r) => roleOf(r) === 'fast');
      return { result, slow: slow!, fast: fast! };
    };
    const [par, seq] = await Promise.all([run(true), run(false)]);
    expect(par.result).toMatchObject({ code: 0, stdout: 'slow result | fast result' });
    expect(seq.result).toMatchObject({ code: 0, stdout: 'slow result | fast result' });
    // Parallel: the second call starts before the first one ends (and finishes first; the slow one
    // is answered once the fast one has finished, which may be within the same millisecond).
    expect(par.fast.receivedAt).toBeLessThanOrEqual(par.slow.finishedAt!);
    expect(par.fast.finishedAt!).toBeLessThanOrEqual(par.slow.finishedAt!);
    // Sequential: the second call starts only after the first one has finished.
    expect(seq.fast.receivedAt).toBeGreaterThanOrEqual(seq.slow.finishedAt!);
  });

  it('times a sub-agent out per sub_agents_config.timeout: request aborted, error result, parent fine', async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead', { subAgents: ['stuck'], subAgentsConfig: ['timeout = 1'] }));
    home.agent('stuck', agentToml('stuck'));
    fake.respond((request) =>
      roleOf(request) === 'stuck'
        ? { fault: { kind: 'hang' } }
        : delegatingParent([callAgent('stuck', 'wait')], 'went on without it')(request),
    );
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'x'], {
      env: home.env(fake.url),
    });
    expect(result).toMatchObject({ code: 0, stdout: 'went on without it' });
    const stuck = fake.requests.find((r) => roleOf(r) === 'stuck');
    expect(stuck?.aborted).toBe(true);
    const final = fake.requests.find((r) => roleOf(r) === 'lead' && r.toolResults.length > 0);
    expect(final?.toolResults).toMatchObject([
      {
        content:
          'Error: sub-agent "stuck" failed - timeout after 1s. You may retry or proceed without this result.',
        isError: true,
      },
    ]);
  });

  it('turns sub-agent failures into error results and keeps its own exit code', async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead', { subAgents: ['missing', 'broken'] }));
    home.agent('broken', agentToml('broken'));
    fake.respond((request) =>
      roleOf(request) === 'broken'
        ? { fault: { kind: 'status', status: 401, message: 'invalid x-api-key' } }
        : delegatingParent(
            [
              callAgent('missing', 'a'),
              callAgent('outsider', 'b'),
              callAgent('broken', 'c'),
              callAgent('broken', ''),
            ],
            'survived',
          )(request),
    );
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'x', '--json'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(0);
    const envelope = JSON.parse(result.stdout);
    expect(envelope.content).toBe('survived');
    const [missing, outsider, broken, noTask] = envelope.tool_call_details;
    expect(noTask).toMatchObject({ is_error: true, output: 'call_agent error: "task" argument is required' });
    // A sub-agent that cannot be loaded.
    expect(missing).toMatchObject({
      is_error: true,
      output: 'call_agent error: failed to load agent "missing": agent config not found: missing',
    });
    expect(outsider).toMatchObject({
      is_error: true,
      output: 'call_agent error: agent "outsider" is not in this agent\'s sub_agents list',
    });
    expect(broken.output).toMatch(
      /^Error: sub-agent "broken" failed - .*You may retry or proceed without this result\.$/s,
    );
    expect(result.stdout).not.toContain('test-key');
  });

  it('--dry-run shows every resolved section with no server and no key', async () => {
    const { home } = await setup();
    home.file('work/notes.md', 'NOTES');
    home.agent(
      'lead',
      agentToml('lead', {
        subAgents: ['a', 'b'],
        subAgentsConfig: ['max_depth = 2', 'parallel = false', 'timeout = 30'],
        extra: [`workdir = "${path.join(home.root, 'work')}"`, 'files = ["*.md"]', 'timeout = 45'],
      }),
    );
    home.agent('solo', agentToml('solo'));
    const env = home.env('http://127.0.0.1:9'); // a key is set: it must not be printed; nothing listens there
    const [lead, solo] = await Promise.all([
      runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '--dry-run', '-p', 'the task'], { env }),
      runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '--dry-run', '--timeout', '7'], { env }),
    ]);
    expect(lead.code).toBe(0);
    expect(lead.stderr).toBe('');
    expect(lead.stdout).toContain('=== Dry Run ===\n\nModel:    anthropic/claude-test\n');
    expect(lead.stdout).toContain(`Workdir:  ${path.join(home.root, 'work')}\nTimeout:  45s\n`);
    expect(lead.stdout).toContain('--- System Prompt ---\nROLE:lead');
    expect(lead.stdout).toContain('NOTES');
    expect(lead.stdout).toContain('--- Files (1) ---\nnotes.md\n');
    expect(lead.stdout).toContain('--- User Message ---\nthe task\n');
    expect(lead.stdout).toContain('--- Sub-Agents ---\na, b\nMax Depth: 2\nParallel:  no\nTimeout:   30s\n');
    expect(solo.code).toBe(0);
    expect(solo.stdout).toContain('Timeout:  7s\n');
    expect(solo.stdout).toContain('--- User Message ---\n(default)\n');
    expect(solo.stdout).toContain('--- Sub-Agents ---\n(none)\n');
    expect(lead.stdout + solo.stdout).not.toContain('test-key');
  });

  it('--dry-run reads config.toml as a run does: a broken one is exit 2 naming it, an unknown key a warning', async () => {
    const { home } = await setup();
    home.agent('solo', agentToml('solo'));
    const config = path.join(home.configDir, 'config.toml');
    const dryRun = () =>
      runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '--dry-run'], { env: home.env('') });
    writeFileSync(config, '[providers.anthropic\n');
    const broken = await dryRun();
    expect(broken).toMatchObject({ code: 2, stdout: '' });
    expect(lines(broken.stderr)).toEqual([expect.stringMatching(/^axe: .*config\.toml:1:\d+: /)]);
    writeFileSync(config, 'colour = "blue"\n');
    const warned = await dryRun();
    expect(warned.code).toBe(0);
    expect(warned.stdout).toContain('=== Dry Run ===');
    expect(lines(warned.stderr)).toEqual([expect.stringMatching(/^Warning: .*colour: unknown/)]);
  });

  it('stops at the token budget with exit 4, printing the answer so far', async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead', { subAgents: ['helper'] })).agent('helper', agentToml('helper'));
    fake.respond((request) =>
      roleOf(request) === 'helper'
        ? { text: 'helper done', usage: { input: 40, output: 40 } }
        : request.toolResults.length === 0
          ? {
              text: 'Looking into it.',
              toolCalls: [callAgent('helper', 'x')],
              usage: { input: 30, output: 10 },
            }
          : { text: 'never sent', usage: { input: 1, output: 1 } },
    );
    const env = home.env(fake.url);
    const args = ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'x', '--max-tokens', '100'];
    const [plain, json] = await Promise.all([runAxe(args, { env }), runAxe([...args, '--json'], { env })]);
    expect(plain.code).toBe(4);
    expect(plain.stdout).toBe('Looking into it.');
    expect(lines(plain.stderr)).toEqual(['axe: budget exceeded: used 120 of 100 tokens']);
    expect(json.code).toBe(4);
    expect(JSON.parse(json.stdout)).toMatchObject({
      budget_max_tokens: 100,
      budget_used_tokens: 120,
      budget_exceeded: true,
      error: { kind: 'budget', message: 'budget exceeded: used 120 of 100 tokens', exit_code: 4 },
    });
    expect(fake.requests.filter((r) => r.lastUserText === 'x' && r.toolResults.length > 0)).toEqual([]);
  });

  it('a last call that goes over the budget prints the full answer and still exits 4', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    fake.respond(() => ({ text: 'the whole answer', usage: { input: 90, output: 30 } }));
    const env = home.env(fake.url);
    const args = ['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x', '--max-tokens', '100'];
    const [plain, json, roomy] = await Promise.all([
      runAxe(args, { env }),
      runAxe([...args, '--json'], { env }),
      runAxe([...args.slice(0, -1), '120'], { env }),
    ]);
    expect(plain).toMatchObject({ code: 4, stdout: 'the whole answer' });
    expect(lines(plain.stderr)).toEqual(['axe: budget exceeded: used 120 of 100 tokens']);
    expect(JSON.parse(json.stdout)).toMatchObject({ content: 'the whole answer', budget_exceeded: true });
    expect(roomy).toMatchObject({ code: 0, stdout: 'the whole answer', stderr: '' });
  });

  it('takes the user message from -p, else piped stdin, else the default instruction', async () => {
    const { home, fake } = await setup();
    home.agent('echo', agentToml('echo'));
    fake.respond((request) => ({ text: `got: ${request.lastUserText}` }));
    const env = home.env(fake.url);
    const base = ['run', 'echo', '--agents-dir', home.agentsDir];
    const results = await Promise.all([
      runAxe(base, { env, stdin: 'diff --git a/x b/x\n' }),
      runAxe([...base, '-p', 'flag wins'], { env, stdin: 'ignored pipe' }),
      runAxe(base, { env, stdin: '' }),
      runAxe(base, { env, stdin: '  \n' }),
      runAxe(base, { env }),
      runAxe([...base, '-p', '1e3'], { env }),
      // --agents-dir is repeatable: the first dir has no such agent, the second has.
      runAxe(['run', 'echo', '--agents-dir', home.root, '--agents-dir', home.agentsDir, '-p', '007'], {
        env,
      }),
    ]);
    expect(results.map((r) => r.stdout)).toEqual([
      'got: diff --git a/x b/x\n',
      'got: flag wins',
      'got: Execute the task described in your instructions.',
      'got: Execute the task described in your instructions.',
      'got: Execute the task described in your instructions.',
      'got: 1e3',
      'got: 007',
    ]);
    expect(results.every((r) => r.code === 0)).toBe(true);
  });

  it('rejects bad flags (--timeout, --max-tokens, --record with --replay) with exit 2 naming them', async () => {
    const { home } = await setup();
    home.agent('solo', agentToml('solo'));
    const env = home.env();
    const [timeout, tokens, both] = await Promise.all([
      runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '--timeout', 'soon'], { env }),
      runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '--max-tokens', '1.5'], { env }),
      runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '--record', 'a.jsonl', '--replay', 'b.jsonl'], {
        env,
      }),
    ]);
    expect(both).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'axe: --record and --replay cannot be used together\n',
    });
    expect(timeout).toMatchObject({ code: 2, stdout: '' });
    expect(lines(timeout.stderr)).toEqual([
      'axe: --timeout: expected a positive number of seconds, got "soon"',
    ]);
    expect(tokens).toMatchObject({ code: 2, stdout: '' });
    expect(lines(tokens.stderr)).toEqual([
      'axe: --max-tokens: expected a positive whole number of tokens, got "1.5"',
    ]);
  });

  it('takes --max-tokens as plain decimal digits only: no hex, binary, exponent or unsafe size', async () => {
    const { home } = await setup();
    home.agent('solo', agentToml('solo'));
    const env = home.env();
    const typed = ['0x10', '0b11', '1e308', '1e3', '9007199254740993', '0', '+5', ' 5'];
    const results = await Promise.all(
      typed.map((value) =>
        runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '--dry-run', `--max-tokens=${value}`], {
          env,
        }),
      ),
    );
    results.forEach((result, i) => {
      expect(result).toMatchObject({
        code: 2,
        stdout: '',
        stderr: `axe: --max-tokens: expected a positive whole number of tokens, got "${typed[i]}"\n`,
      });
    });
    const plain = await runAxe(
      ['run', 'solo', '--agents-dir', home.agentsDir, '--dry-run', '--max-tokens', '0016'],
      { env },
    );
    expect(plain).toMatchObject({ code: 0, stderr: '' });
  });
});
