import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentToml, roleOf } from './agents.js';
import { e2eHomes, lines, runAxe } from './cli.js';

/**
 * Runs without an agent file (`axe run -m provider/model -p …`), config.toml's `[defaults] model`,
 * and the habits of other CLIs: a prompt after the agent's name, `-m`, `--system`,
 * `--output-format`.
 */
const setup = e2eHomes();

describe.concurrent('axe run without an agent file', () => {
  it('-m and -p run a bare model: no tools unless --tools, no system prompt unless --system', async () => {
    const { home, fake } = await setup();
    fake.respond((request) => ({ text: `got: ${request.lastUserText}` }));
    const env = home.env(fake.url);
    const bare = await runAxe(['run', '-m', 'openai/gpt-test', '-p', 'hello'], { env, cwd: home.root });
    expect(bare).toMatchObject({ code: 0, stdout: 'got: hello', stderr: '' });
    const piped = await runAxe(
      [
        'run',
        '--model',
        'anthropic/claude-test',
        '--tools',
        'read_file,list_directory',
        '--system',
        'Be brief.',
      ],
      {
        env,
        cwd: home.root,
        stdin: 'from stdin',
      },
    );
    expect(piped).toMatchObject({ code: 0, stdout: 'got: from stdin', stderr: '' });
    const [first, second] = fake.requests;
    expect(first).toMatchObject({ wire: 'openai', model: 'gpt-test', system: '', toolNames: [] });
    expect(first?.body).not.toHaveProperty('tools');
    expect(second).toMatchObject({ wire: 'anthropic', model: 'claude-test', system: 'Be brief.' });
    expect(second?.toolNames).toEqual(['read_file', 'list_directory']);
    expect(fake.rejections).toEqual([]);
  });

  it('[defaults] model serves a run with no -m and a top-level `model: inherit`; -m wins', async () => {
    const { home, fake } = await setup();
    writeFileSync(path.join(home.configDir, 'config.toml'), '[defaults]\nmodel = "openai/gpt-default"\n');
    home.file('agents/inheritor.md', '---\nname: inheritor\nmodel: inherit\n---\nROLE:inheritor\n');
    fake.respond((request) => ({ text: `${roleOf(request) || 'ad-hoc'} on ${request.model}` }));
    const env = home.env(fake.url);
    const adHoc = await runAxe(['run', '-p', 'hi'], { env, cwd: home.root });
    expect(adHoc).toMatchObject({ code: 0, stdout: 'ad-hoc on gpt-default', stderr: '' });
    const inherits = await runAxe(['run', 'inheritor', '--agents-dir', home.agentsDir, '-p', 'hi'], { env });
    expect(inherits).toMatchObject({ code: 0, stdout: 'inheritor on gpt-default' });
    const flag = await runAxe(
      ['run', 'inheritor', '--agents-dir', home.agentsDir, '-m', 'openai/gpt-flag', '-p', 'hi'],
      {
        env,
      },
    );
    expect(flag).toMatchObject({ code: 0, stdout: 'inheritor on gpt-flag' });
  });

  it('without a model anywhere, or with a bad one: one line naming the fix, exit 2, nothing sent', async () => {
    const { home, fake } = await setup();
    const env = home.env(fake.url);
    const none = await runAxe(['run', '-p', 'hi'], { env, cwd: home.root });
    expect(none).toEqual(
      expect.objectContaining({
        code: 2,
        stdout: '',
        stderr:
          'axe: name an agent to run, or a model to run without one (-m provider/model, or [defaults] model in config.toml)\n',
      }),
    );
    const badTool = await runAxe(['run', '-m', 'openai/x', '-p', 'hi', '--tools', 'read_fil'], {
      env,
      cwd: home.root,
    });
    expect(badTool).toMatchObject({ code: 2, stdout: '' });
    expect(badTool.stderr).toMatch(/^axe: --tools: unknown tool "read_fil" \(did you mean "read_file"\?\)/);
    const badModel = await runAxe(['run', '-m', 'no-slash', '-p', 'hi'], { env, cwd: home.root });
    expect(badModel).toMatchObject({ code: 2, stdout: '' });
    expect(badModel.stderr).toMatch(/^axe: --model: invalid model format "no-slash"/);
    home.agent('solo', agentToml('solo'));
    const toolsOnAgent = await runAxe(
      ['run', 'solo', '--agents-dir', home.agentsDir, '--tools', 'read_file', '-p', 'x'],
      {
        env,
      },
    );
    expect(toolsOnAgent).toMatchObject({ code: 2, stdout: '' });
    expect(toolsOnAgent.stderr).toMatch(/^axe: --tools is for a run without an agent file/);
    expect(fake.requests).toEqual([]);
  });
});

describe.concurrent("other CLIs' habits", () => {
  it('a prompt after the agent name is -p: joined with stdin by --stdin-append; both at once is an error', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    fake.respond((request) => ({ text: request.lastUserText }));
    const env = home.env(fake.url);
    const base = ['run', 'solo', '--agents-dir', home.agentsDir];
    expect(await runAxe([...base, 'review this'], { env })).toMatchObject({ code: 0, stdout: 'review this' });
    expect(await runAxe([...base, 'two', 'words'], { env })).toMatchObject({ code: 0, stdout: 'two words' });
    expect(await runAxe([...base, 'look', '--stdin-append'], { env, stdin: 'the diff' })).toMatchObject({
      code: 0,
      stdout: 'look\n\nthe diff',
    });
    const both = await runAxe([...base, 'words', '-p', 'flag'], { env });
    expect(both).toMatchObject({ code: 2, stdout: '' });
    expect(both.stderr).toMatch(
      /^axe: -p and a prompt after the agent's name \("words"\) cannot be used together/,
    );
  });

  it('--system replaces the system prompt; -m is --model', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    fake.respond(() => ({ text: 'ok' }));
    const env = home.env(fake.url);
    const result = await runAxe(
      [
        'run',
        'solo',
        '--agents-dir',
        home.agentsDir,
        '-p',
        'x',
        '--system',
        'New rules.',
        '-m',
        'openai/gpt-m',
      ],
      { env },
    );
    expect(result).toMatchObject({ code: 0, stdout: 'ok' });
    expect(fake.requests[0]).toMatchObject({ wire: 'openai', model: 'gpt-m', system: 'New rules.' });
  });

  it('--system is recorded with the run: --resume runs with it and refuses a new one', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo', { extra: ['[retry]', 'max_retries = 0'] }));
    fake.enqueue({ fault: { kind: 'status', status: 500 } }, { text: 'resumed' });
    const env = home.env(fake.url);
    const failed = await runAxe(
      ['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x', '--system', 'Kept.'],
      {
        env,
      },
    );
    expect(failed.code).toBe(3);
    const refused = await runAxe(['run', '--resume', 'last', '--system', 'Other.'], { env });
    expect(refused).toMatchObject({ code: 2, stdout: '' });
    expect(refused.stderr).toMatch(/--system cannot be used with it/);
    const resumed = await runAxe(['run', '--resume', 'last'], { env });
    expect(resumed).toMatchObject({ code: 0, stdout: 'resumed' });
    expect(fake.requests.map((request) => request.system)).toEqual(['Kept.', 'Kept.']);
  });

  it('--output-format json is --json; stream-json prints the events on stdout, the answer in the last', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    fake.respond(() => ({ text: 'the answer' }));
    const env = home.env(fake.url);
    const base = ['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x'];
    const json = await runAxe([...base, '--output-format', 'json'], { env });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ content: 'the answer' });
    const text = await runAxe([...base, '--output-format', 'text'], { env });
    expect(text).toMatchObject({ code: 0, stdout: 'the answer' });
    const stream = await runAxe([...base, '--output-format', 'stream-json'], { env });
    expect(stream).toMatchObject({ code: 0, stderr: '' });
    const events = lines(stream.stdout).map((line) => JSON.parse(line) as { type: string; content?: string });
    expect(events[0]?.type).toBe('agent.start');
    expect(events.at(-1)).toMatchObject({ type: 'agent.end', content: 'the answer' });
    const bad = await runAxe([...base, '--output-format', 'yaml'], { env });
    expect(bad).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'axe: --output-format: expected text, json or stream-json, got "yaml"\n',
    });
  });
});
