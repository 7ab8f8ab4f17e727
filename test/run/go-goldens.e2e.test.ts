import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest, ScriptedReply } from '../fake-llm/types.js';
import { e2eHomes, REPO_ROOT, runAxe, type TempHome } from './cli.js';
import { expectRequestGolden } from './request-goldens.js';

/**
 * Go axe v1.8's golden tests (`cmd/golden_test.go`, `cmd/testdata/golden/{dry-run,json}`), written
 * here from what they assert: the same six fixture agents, the same mock replies, the same masking
 * (workdir → {{WORKDIR}}; durations and tool outputs → placeholders; keys sorted, two-space JSON).
 * axe's documented extra `--json` keys are dropped before comparing; everything else must match.
 */
const setup = e2eHomes();

const FIXTURES: Record<string, string> = {
  basic: 'name = "basic"\nmodel = "openrouter/openai/gpt-4o-mini"\n',
  with_skill:
    'name = "with-skill"\nmodel = "openrouter/openai/gpt-4o-mini"\nskill = "skills/stub/SKILL.md"\n',
  with_files:
    'name = "with-files"\nmodel = "openrouter/openai/gpt-4o-mini"\nfiles = ["README.md", "docs/**/*.md"]\n',
  with_memory:
    'name = "with-memory"\nmodel = "openrouter/openai/gpt-4o-mini"\n\n[memory]\nenabled = true\nlast_n = 5\nmax_entries = 50\n',
  with_subagents:
    'name = "with-subagents"\nmodel = "openrouter/openai/gpt-4o-mini"\nsub_agents = ["basic", "with_skill"]\n\n[sub_agents_config]\nmax_depth = 3\nparallel = true\ntimeout = 60\n',
  with_tools:
    'name = "with_tools"\nmodel = "openrouter/openai/gpt-4o-mini"\ntools = ["read_file", "list_directory"]\n',
};

const STUB_SKILL =
  '# Stub Skill\n\n## Purpose\n\nTest fixture skill for integration tests.\n\n## Instructions\n\n1. Respond with "stub skill active".\n\n## Output Format\n\nPlain text, single line.\n';

function dryRunGolden(agent: string): string {
  const sections: Record<string, string> = {
    systemPrompt: agent === 'with_skill' ? `\n\n---\n\n## Skill\n\n${STUB_SKILL}` : '',
    skill: agent === 'with_skill' ? STUB_SKILL : '(none)',
    memory: agent === 'with_memory' ? '\n--- Memory ---\n(none)\n' : '',
    tools: agent === 'with_tools' ? 'read_file, list_directory' : '(none)',
    subAgents:
      agent === 'with_subagents'
        ? 'basic, with_skill\nMax Depth: 3\nParallel:  yes\nTimeout:   60s'
        : '(none)',
  };
  return `=== Dry Run ===

Model:    openrouter/openai/gpt-4o-mini
Workdir:  {{WORKDIR}}
Timeout:  120s
Params:   temperature=0, max_tokens=0
Budget:   0 tokens (0 = unlimited)
Stream:   no

--- System Prompt ---
${sections.systemPrompt}

--- Skill ---
${sections.skill}

--- Files (0) ---
(none)

--- User Message ---
(default)
${sections.memory}
--- Tools ---
${sections.tools}

--- MCP Servers ---
(none)

--- Sub-Agents ---
${sections.subAgents}
`;
}

/** Go's mock: a tool-call reply counts 10 in / 20 out, a text reply 10 in / 5 out, model gpt-4o. */
const toolCallReply = (text: string, calls: ScriptedReply['toolCalls']): ScriptedReply => ({
  text,
  toolCalls: calls,
  usage: { input: 10, output: 20 },
  model: 'gpt-4o',
});
const textReply = (text: string): ScriptedReply => ({
  text,
  usage: { input: 10, output: 5 },
  model: 'gpt-4o',
});

function mockFor(agent: string): (request: RecordedRequest) => ScriptedReply {
  if (agent === 'with_tools') {
    return (request) =>
      request.toolResults.length === 0
        ? toolCallReply('Let me list the directory.', [
            { id: 'tc_1', name: 'list_directory', arguments: { path: '.' } },
          ])
        : textReply('Directory listed successfully.');
  }
  if (agent === 'with_subagents') {
    return (request) => {
      if (request.lastUserText === 'Task: hello') {
        return textReply(
          request.system.includes('Stub Skill') ? 'Hello from with_skill.' : 'Hello from basic.',
        );
      }
      return request.toolResults.length === 0
        ? toolCallReply('Delegating to sub-agents.', [
            { id: 'tc_1', name: 'call_agent', arguments: { agent: 'basic', task: 'hello' } },
            { id: 'tc_2', name: 'call_agent', arguments: { agent: 'with_skill', task: 'hello' } },
          ])
        : textReply('Final answer from sub-agents.');
    };
  }
  return () => textReply('Hello from mock.');
}

const JSON_GOLDENS: Record<string, object> = {
  basic: basicGolden(),
  with_skill: basicGolden(),
  with_files: basicGolden(),
  with_memory: basicGolden(),
  with_tools: {
    content: 'Directory listed successfully.',
    duration_ms: '{{DURATION_MS}}',
    input_tokens: 20,
    model: 'gpt-4o',
    output_tokens: 25,
    refused: false,
    retry_attempts: 0,
    stop_reason: 'stop',
    tool_call_details: [detail('list_directory', { path: '.' })],
    tool_calls: 1,
  },
  with_subagents: {
    content: 'Final answer from sub-agents.',
    duration_ms: '{{DURATION_MS}}',
    input_tokens: 20,
    model: 'gpt-4o',
    output_tokens: 25,
    refused: false,
    retry_attempts: 0,
    stop_reason: 'stop',
    tool_call_details: [
      detail('call_agent', { agent: 'basic', task: 'hello' }),
      detail('call_agent', { agent: 'with_skill', task: 'hello' }),
    ],
    tool_calls: 2,
  },
};

function basicGolden(): object {
  return {
    content: 'Hello from mock.',
    duration_ms: '{{DURATION_MS}}',
    input_tokens: 10,
    model: 'gpt-4o',
    output_tokens: 5,
    refused: false,
    retry_attempts: 0,
    stop_reason: 'stop',
    tool_call_details: [],
    tool_calls: 0,
  };
}

function detail(name: string, input: Record<string, string>): object {
  return {
    duration_ms: '{{TOOL_DURATION_MS}}',
    input,
    is_error: false,
    name,
    output: '{{TOOL_OUTPUT}}',
    turn: 0,
  };
}

/** axe's documented additions to Go's envelope (docs/go-differences.md). */
const AXE_EXTRA_KEYS = [
  'provider',
  'cache_read_tokens',
  'cache_write_tokens',
  'cost_usd',
  'cost_usd_without_cache',
  'agents',
];

/** Go's maskJSONOutput: placeholders for durations and tool outputs, keys sorted, two spaces. */
function maskJson(stdout: string): string {
  const envelope = JSON.parse(stdout) as Record<string, unknown>;
  for (const key of AXE_EXTRA_KEYS) delete envelope[key];
  envelope.duration_ms = '{{DURATION_MS}}';
  for (const entry of envelope.tool_call_details as Record<string, unknown>[]) {
    entry.output = '{{TOOL_OUTPUT}}';
    entry.duration_ms = '{{TOOL_DURATION_MS}}';
  }
  return `${JSON.stringify(sortKeys(envelope), null, 2)}\n`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  );
}

function seed(home: TempHome): string {
  for (const [name, toml] of Object.entries(FIXTURES)) home.agent(name, toml);
  mkdirSync(path.join(home.configDir, 'skills', 'stub'), { recursive: true });
  writeFileSync(path.join(home.configDir, 'skills', 'stub', 'SKILL.md'), STUB_SKILL);
  const cwd = path.join(home.root, 'cwd');
  mkdirSync(cwd);
  return cwd;
}

describe.concurrent("Go axe's golden files", () => {
  for (const agent of Object.keys(FIXTURES)) {
    it(`dry-run/${agent}.txt`, async () => {
      const { home } = await setup();
      const cwd = seed(home);
      const result = await runAxe(['run', agent, '--agents-dir', home.agentsDir, '--dry-run'], {
        env: home.env(),
        cwd,
      });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(result.stdout.replaceAll(cwd, '{{WORKDIR}}')).toBe(dryRunGolden(agent));
    });

    it(`json/${agent}.json`, async () => {
      const { home, fake } = await setup();
      const cwd = seed(home);
      fake.respond(mockFor(agent));
      const env = home.env(fake.url, {
        AXE_OPENROUTER_BASE_URL: `${fake.url}/v1`,
        OPENROUTER_API_KEY: 'test-key',
      });
      const result = await runAxe(['run', agent, '--agents-dir', home.agentsDir, '--json'], { env, cwd });
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      expect(maskJson(result.stdout)).toBe(`${JSON.stringify(JSON_GOLDENS[agent], null, 2)}\n`);
      expectRequestGolden(`go-${agent}`, fake.requests, (text) => text.replaceAll(cwd, '{{WORKDIR}}'));
    });
  }
});

describe("the shipped example's requests", () => {
  it('team-lead and its two reviewers send what they sent before the sub-agent work', async () => {
    const { home, fake } = await setup();
    fake.respond((request) => {
      if (!request.toolNames.includes('call_agent'))
        return { text: `findings of ${request.system.slice(0, 40)}` };
      if (request.toolResults.length > 0) return { text: 'REQUEST CHANGES' };
      return {
        toolCalls: [
          {
            id: 'c1',
            name: 'call_agent',
            arguments: { agent: 'security-reviewer', task: 'security', context: 'diff' },
          },
          {
            id: 'c2',
            name: 'call_agent',
            arguments: { agent: 'style-reviewer', task: 'style', context: 'diff' },
          },
        ],
      };
    });
    const examples = path.join(REPO_ROOT, 'agents/examples');
    const diff = readFileSync(path.join(examples, 'sample.diff'), 'utf8');
    const result = await runAxe(['run', 'team-lead', '--agents-dir', examples], {
      env: home.env(fake.url),
      cwd: home.root,
      stdin: diff,
    });
    expect(result).toMatchObject({ code: 0, stdout: 'REQUEST CHANGES' });
    expect(fake.requests).toHaveLength(4);
    expectRequestGolden('shipped-example', fake.requests, (text) => text.replaceAll(home.root, '{{HOME}}'));
  });
});

describe.concurrent("Go axe's --verbose", () => {
  it('the block before the first call on every run; [turn N] lines only for an agent with tools', async () => {
    const { home, fake } = await setup();
    const cwd = seed(home);
    fake.respond(mockFor('basic'));
    const env = home.env(fake.url, {
      AXE_OPENROUTER_BASE_URL: `${fake.url}/v1`,
      OPENROUTER_API_KEY: 'test-key',
    });
    const single = await runAxe(
      ['run', 'with_memory', '--agents-dir', home.agentsDir, '-v', '--timeout', '30'],
      {
        env,
        cwd,
        stdin: 'from stdin',
      },
    );
    expect(single.code).toBe(0);
    expect(single.stderr.split('\n').slice(0, 8)).toEqual([
      'Model:    openrouter/openai/gpt-4o-mini',
      `Workdir:  ${cwd}`,
      'Skill:    (none)',
      'Files:    0 file(s)',
      'Prompt:   stdin',
      'Timeout:  30s',
      'Params:   temperature=0, max_tokens=0',
      'Memory:   0 entries (no memory file)',
    ]);
    expect(single.stderr).not.toContain('[turn');
    const again = await runAxe(['run', 'with_memory', '--agents-dir', home.agentsDir, '-v', '-p', 'x'], {
      env,
      cwd,
    });
    expect(again.stderr).toMatch(/^Memory: {3}1 entries loaded from .*\/memory\/with_memory\.md$/m);
    expect(again.stderr).toMatch(
      /^Memory: {3}1 entries loaded from .*with-memory\.md$|^Memory: {3}1 entries loaded from .*with_memory\.md$/m,
    );

    fake.respond(mockFor('with_tools'));
    const tools = await runAxe(
      ['run', 'with_skill', '--agents-dir', home.agentsDir, '-v', '--skill', 'skills/stub/SKILL.md'],
      {
        env,
        cwd,
      },
    );
    expect(tools.stderr).toMatch(
      /^Skill: {4}skills\/stub\/SKILL\.md\nFiles: {4}0 file\(s\)\nPrompt: {3}default\n/m,
    );
    const looping = await runAxe(['run', 'with_tools', '--agents-dir', home.agentsDir, '-v'], { env, cwd });
    const streaming = await runAxe(['run', 'with_tools', '--agents-dir', home.agentsDir, '-v', '--stream'], {
      env,
      cwd,
    });
    expect(streaming.stderr).toMatch(
      /^\[turn 1\] Streaming request \(1 messages\)\n\[turn 1\] Stream complete: tool_calls \(1 tool calls\)$/m,
    );
    expect(looping.stderr).toMatch(
      /Params: {3}temperature=0, max_tokens=0\n\[turn 1\] Sending request \(1 messages, 0 tool calls pending\)\n/,
    );
  });
});

describe.concurrent("Go axe's model and provider errors", () => {
  it('--model without a slash is exit 2 (invalid model format); an unsupported provider exit 1', async () => {
    const { home } = await setup();
    const cwd = seed(home);
    const base = ['run', 'basic', '--agents-dir', home.agentsDir, '-p', 'x'];
    const noSlash = await runAxe([...base, '--model', 'no-slash'], { env: home.env(), cwd });
    expect(noSlash.code).toBe(2);
    expect(noSlash.stdout).toBe('');
    expect(noSlash.stderr).toMatch(
      /^axe: --model: invalid model format "no-slash": expected provider\/model-name/,
    );
    const unsupported = await runAxe([...base, '--model', 'nosuch/model'], { env: home.env(), cwd });
    expect(unsupported.code).toBe(1);
    expect(unsupported.stderr).toMatch(/^axe: unsupported provider "nosuch": /);
    const keyless = await runAxe([...base, '--model', 'anthropic/claude-x'], { env: home.env(), cwd });
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toBe(
      'axe: API key for provider "anthropic" is not configured (set ANTHROPIC_API_KEY or add to config.toml)\n',
    );
  });
});

describe.concurrent("OpenRouter's cache status", () => {
  it('X-OpenRouter-Cache-Status of the last call is --json cache_status, absent when not sent', async () => {
    const { home, fake } = await setup();
    const cwd = seed(home);
    const env = home.env(fake.url, {
      AXE_OPENROUTER_BASE_URL: `${fake.url}/v1`,
      OPENROUTER_API_KEY: 'test-key',
    });
    const args = ['run', 'basic', '--agents-dir', home.agentsDir, '--json', '-p', 'x'];
    fake.enqueue({ text: 'cached', headers: { 'x-openrouter-cache-status': 'HIT' } });
    expect(JSON.parse((await runAxe(args, { env, cwd })).stdout)).toMatchObject({ cache_status: 'HIT' });
    fake.enqueue({ text: 'plain' });
    expect(JSON.parse((await runAxe([...args, '--stream'], { env, cwd })).stdout)).not.toHaveProperty(
      'cache_status',
    );
    fake.enqueue({ text: 'streamed', headers: { 'x-openrouter-cache-status': 'MISS' } });
    expect(JSON.parse((await runAxe([...args, '--stream'], { env, cwd })).stdout)).toMatchObject({
      cache_status: 'MISS',
    });
  });
});
