import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAKE_AWS_ACCESS_KEY_ID, FAKE_AWS_SECRET_ACCESS_KEY } from '../fake-llm/bedrock-validate.js';
import type { RecordedRequest, ScriptedReply } from '../fake-llm/types.js';
import { callAgent, delegatingParent, roleOf } from './agents.js';
import { e2eHomes, runAxe, type TempHome } from './cli.js';

/**
 * Prompt caching by default (docs/caching.md), end to end against the fake's prompt cache: where
 * the breakpoints go on Anthropic and Bedrock, when none is sent (Go's TOML files, one-turn runs,
 * `prompt_caching = false`), and the cache's counts in `--json`.
 */

/** Each case's own home and fake server, whose prompt cache is on. */
const setup = e2eHomes({ cache: true });

/** Over the smallest cacheable prefix (1,024 tokens) of claude models. */
const PROMPT = `ROLE:cached ${'Review carefully and cite file and line. '.repeat(150)}`;

/** Three turns: two list_directory calls, then the answer. */
function toolLoop(request: RecordedRequest): ScriptedReply {
  return request.toolResults.length < 2
    ? { toolCalls: [{ name: 'list_directory', arguments: { path: '.' } }] }
    : { text: 'done' };
}

function markdown(home: TempHome, name: string, front: string[]): void {
  writeFileSync(
    path.join(home.agentsDir, `${name}.md`),
    `---\nname: ${name}\n${front.join('\n')}\n---\n${PROMPT}\n`,
  );
}

const marked = (request: RecordedRequest | undefined) =>
  JSON.stringify(request?.body).includes('cache_control');

function lastBlock(request: RecordedRequest | undefined): unknown {
  const messages = ((request?.body ?? {}) as { messages: { content: unknown[] }[] }).messages;
  return messages.at(-1)?.content.at(-1);
}

describe.concurrent('prompt caching by default', () => {
  it('Anthropic, a Markdown agent with tools: the system prompt and the newest message are breakpoints; --json counts what the cache read and wrote', async () => {
    const { home, fake } = await setup();
    markdown(home, 'cached', ['model: anthropic/claude-sonnet-4-5', 'tools: list_directory']);
    fake.respond(toolLoop);
    const args = ['run', 'cached', '--agents-dir', home.agentsDir, '-p', 'go', '--workdir', home.agentsDir];
    const result = await runAxe([...args, '--json'], { env: home.env(fake.url) });
    expect(result.stderr).toBe('');
    expect(fake.requests).toHaveLength(3);
    for (const request of fake.requests) {
      expect((request.body as { system: unknown }).system).toEqual([
        { type: 'text', text: expect.stringContaining('ROLE:cached'), cache_control: { type: 'ephemeral' } },
      ]);
    }
    // The first request has no earlier turn to read: its message is no breakpoint.
    expect(lastBlock(fake.requests[0])).not.toHaveProperty('cache_control');
    expect(lastBlock(fake.requests[1])).toMatchObject({
      type: 'tool_result',
      cache_control: { type: 'ephemeral' },
    });
    expect(lastBlock(fake.requests[2])).toMatchObject({
      type: 'tool_result',
      cache_control: { type: 'ephemeral' },
    });
    const caches = fake.requests.map((r) => r.cache ?? { read: -1, write: -1, uncached: -1 });
    expect(caches[1]?.read).toBeGreaterThan(0);
    // The third turn reads all of the second's prompt: only its own new message is uncached or written.
    expect(caches[2]?.read).toBe((caches[1]?.read ?? 0) + (caches[1]?.write ?? 0));
    const json = JSON.parse(result.stdout);
    const sum = (key: 'read' | 'write' | 'uncached') => caches.reduce((total, c) => total + c[key], 0);
    expect(json).toMatchObject({
      content: 'done',
      cache_read_tokens: sum('read'),
      cache_write_tokens: sum('write'),
      input_tokens: sum('uncached'),
    });
    // The same counts in `axe runs show` and, for the same run again on an empty cache, in --verbose.
    const counts = `${sum('read')} read from the cache, ${sum('write')} written, ${sum('uncached')} uncached`;
    const [id] = home.runIds();
    const show = await runAxe(['runs', 'show', id ?? ''], { env: home.env(fake.url) });
    expect(show.stdout.split('\n')[0]).toContain(`(${counts} (`);
    fake.clearCache();
    const verbose = await runAxe([...args, '-v'], { env: home.env(fake.url) });
    expect(verbose.stderr).toMatch(
      new RegExp(`^Cache: +${counts} \\(\\d+% of \\d+ prompt tokens cached\\)$`, 'm'),
    );
  });

  it("a TOML agent (Go's format) sends Go's bytes; config.toml [defaults] prompt_caching = true caches it", async () => {
    const { home, fake } = await setup();
    const toml = [
      'name = "cached"',
      'model = "anthropic/claude-sonnet-4-5"',
      `system_prompt = "${PROMPT}"`,
      'tools = ["list_directory"]',
    ].join('\n');
    home.agent('cached', `${toml}\n`);
    home.agent(
      'plain',
      'name = "plain"\nmodel = "anthropic/claude-sonnet-4-5"\nsystem_prompt = "ROLE:plain"\n',
    );
    fake.respond(toolLoop);
    const run = (agent: string) =>
      runAxe(['run', agent, '--agents-dir', home.agentsDir, '-p', 'go', '--workdir', home.agentsDir], {
        env: home.env(fake.url),
      });
    expect(await run('cached')).toMatchObject({ code: 0, stdout: 'done' });
    expect(fake.requests.map(marked)).toEqual([false, false, false]);
    expect(((fake.requests[0]?.body ?? {}) as { system: unknown }).system).toBe(PROMPT);

    writeFileSync(path.join(home.configDir, 'config.toml'), '[defaults]\nprompt_caching = true\n');
    fake.reset();
    fake.respond(toolLoop);
    expect(await run('cached')).toMatchObject({ code: 0, stdout: 'done' });
    expect(fake.requests.map(marked)).toEqual([true, true, true]);
    expect(lastBlock(fake.requests[2])).toHaveProperty('cache_control');
    // One turn without tools: a write would never be read, so none is asked for.
    fake.reset();
    fake.respond(() => ({ text: 'one turn' }));
    expect(await run('plain')).toMatchObject({ code: 0, stdout: 'one turn' });
    expect(marked(fake.requests[0])).toBe(false);
  });

  it('prompt_caching: false sends no breakpoint; true marks the system prompt only, as before', async () => {
    const { home, fake } = await setup();
    markdown(home, 'off', [
      'model: anthropic/claude-sonnet-4-5',
      'tools: list_directory',
      'params:',
      '  prompt_caching: false',
    ]);
    markdown(home, 'on', [
      'model: anthropic/claude-sonnet-4-5',
      'tools: list_directory',
      'params:',
      '  prompt_caching: true',
    ]);
    const run = (agent: string) =>
      runAxe(['run', agent, '--agents-dir', home.agentsDir, '-p', 'go', '--workdir', home.agentsDir], {
        env: home.env(fake.url),
      });
    fake.respond(toolLoop);
    expect(await run('off')).toMatchObject({ code: 0, stdout: 'done', stderr: '' });
    expect(fake.requests.map(marked)).toEqual([false, false, false]);
    fake.reset();
    fake.respond(toolLoop);
    expect(await run('on')).toMatchObject({ code: 0, stdout: 'done', stderr: '' });
    expect(fake.requests.map(marked)).toEqual([true, true, true]);
    expect(lastBlock(fake.requests[2])).not.toHaveProperty('cache_control');
  });

  it('Bedrock (a Claude model): cachePoint blocks after the system prompt and in the newest message', async () => {
    const { home, fake } = await setup();
    markdown(home, 'rock', ['model: bedrock/anthropic.claude-sonnet-4-5-v1:0', 'tools: list_directory']);
    fake.respond(toolLoop);
    const env = home.env(undefined, {
      AWS_ACCESS_KEY_ID: FAKE_AWS_ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: FAKE_AWS_SECRET_ACCESS_KEY,
      AWS_REGION: 'us-east-1',
      AXE_BEDROCK_BASE_URL: fake.url,
    });
    const args = ['run', 'rock', '--agents-dir', home.agentsDir, '-p', 'go', '--workdir', home.agentsDir];
    const result = await runAxe([...args, '--json'], { env });
    expect(result.stderr).toBe('');
    expect(fake.requests).toHaveLength(3);
    const body = (i: number) =>
      fake.requests[i]?.body as { system: unknown[]; messages: { content: unknown[] }[] };
    expect(body(0).system).toEqual([{ text: expect.any(String) }, { cachePoint: { type: 'default' } }]);
    expect(body(0).messages.at(-1)?.content.at(-1)).not.toHaveProperty('cachePoint');
    expect(body(2).messages.at(-1)?.content.at(-1)).toEqual({ cachePoint: { type: 'default' } });
    const caches = fake.requests.map((r) => r.cache);
    expect(caches[2]?.read).toBe((caches[1]?.read ?? 0) + (caches[1]?.write ?? 0));
    expect(JSON.parse(result.stdout).cache_read_tokens).toBe((caches[1]?.read ?? 0) + (caches[2]?.read ?? 0));
  });

  it('cache_warmup: of four siblings with the same prompt, the first writes the cache alone and the others, sent once its answer began, read it', async () => {
    const { home, fake } = await setup();
    const lead = ['name = "lead"', 'model = "anthropic/claude-sonnet-4-5"', 'system_prompt = "ROLE:lead"'];
    home.agent(
      'lead',
      `${[...lead, 'sub_agents = ["worker"]', '[sub_agents_config]', 'cache_warmup = true'].join('\n')}\n`,
    );
    home.agent(
      'worker',
      `name = "worker"\nmodel = "anthropic/claude-sonnet-4-5"\nsystem_prompt = "ROLE:worker ${PROMPT}"\n`,
    );
    const parent = delegatingParent(
      [1, 2, 3, 4].map((n) => callAgent('worker', `part ${n}`)),
      'merged',
    );
    // The first worker's answer is held until another worker's request arrives (as it would without
    // warming: the four go out at once), or for 500 ms at most (with warming, none comes meanwhile).
    let workers = 0;
    let wake: (() => void) | undefined;
    fake.respond(async (request) => {
      if (roleOf(request) !== 'worker') return parent(request);
      if (workers++ === 0) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          setTimeout(resolve, 500);
        });
      } else wake?.();
      return { text: 'found' };
    });
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
    });
    expect(result).toMatchObject({ code: 0, stdout: 'merged', stderr: '' });
    const caches = fake.requests.filter((r) => roleOf(r) === 'worker').map((r) => r.cache);
    expect(caches).toHaveLength(4);
    const written = caches[0]?.write ?? 0;
    expect(written).toBeGreaterThan(1024);
    expect(caches.slice(1)).toEqual(
      [1, 2, 3].map(() => ({ read: written, write: 0, uncached: expect.any(Number) })),
    );
  });
});
