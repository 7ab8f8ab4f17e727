import { chmodSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentToml, callAgent, roleOf } from './agents.js';
import { e2eHomes, lines, runAxe } from './cli.js';

/** A key a server echoes back never reaches anything axe writes. */
const setup = e2eHomes();
const KEY = 'sk-live-0123456789abcdef';

describe.concurrent('secrets', () => {
  it('a provider error that echoes the key: masked on stderr, in --json, --verbose, the cassette and the parent', async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead', { subAgents: ['w'] }));
    home.agent('w', agentToml('w'));
    const echo = { kind: 'status', status: 401, message: `invalid x-api-key: ${KEY}` } as const;
    fake.respond((request) => {
      if (roleOf(request) === 'w') return { fault: echo };
      return request.toolResults.length === 0 ? { toolCalls: [callAgent('w', 'go')] } : { text: 'lead done' };
    });
    const env = home.env(fake.url, { ANTHROPIC_API_KEY: KEY });
    const cassette = path.join(home.root, 'run.jsonl');
    const base = ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'x'];
    const delegated = await runAxe([...base, '--json', '--verbose', '--record', cassette], { env });
    expect(delegated.code).toBe(0);
    const parentSaw = fake.requests.find((r) => roleOf(r) === 'lead' && r.toolResults.length > 0);
    expect(parentSaw?.toolResults[0]?.content).toContain('invalid x-api-key: ***');
    expect(delegated.stdout).toContain('invalid x-api-key: ***');
    expect(delegated.stderr).toContain('invalid x-api-key: ***');
    for (const text of [
      delegated.stdout,
      delegated.stderr,
      readFileSync(cassette, 'utf8'),
      parentSaw?.toolResults[0]?.content,
    ]) {
      expect(text).not.toContain(KEY);
    }

    home.agent('solo', agentToml('solo'));
    fake.respond(() => ({ fault: echo }));
    const failed = await runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x'], {
      env: { ...env, AXE_DEBUG: '1' },
    });
    expect(failed.code).toBe(3);
    expect(lines(failed.stderr)[0]).toMatch(/^axe: anthropic: .*invalid x-api-key: \*\*\*/);
    expect(failed.stderr).not.toContain(KEY);
    // Both runs' records (run.json and every transcript) carry the masked text only.
    const runs = path.join(home.root, 'data', 'axe', 'runs');
    const recorded = readdirSync(runs, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => readFileSync(path.join(entry.parentPath, entry.name), 'utf8'));
    expect(recorded.length).toBeGreaterThanOrEqual(5);
    expect(recorded.join('\n')).toContain('invalid x-api-key: ***');
    for (const text of recorded) expect(text).not.toContain(KEY);
  });

  it('a secret with a line break, a quote or a backslash is masked as written and inside JSON: stderr, --json, --events, the cassette, the record', async () => {
    const { home, fake } = await setup();
    const pem = '-----BEGIN KEY-----\nMIIEabcdefghijk\n-----END KEY-----';
    const password = 'pa"ss\\word-123456';
    // A tool's output reaches the model as it is: masked only where axe writes it, encoded.
    writeFileSync(path.join(home.root, 'notes.txt'), `key ${pem} pass ${password}\n`);
    home.agent('solo', agentToml('solo', { extra: ['tools = ["read_file"]'] }));
    fake.respond((request) =>
      request.toolResults.length === 0
        ? { toolCalls: [{ name: 'read_file', arguments: { path: 'notes.txt' } }] }
        : { fault: { kind: 'status', status: 401, message: `rejected: ${pem} / ${password}` } },
    );
    const env = home.env(fake.url, { SIGNING_KEY: pem, DB_PASSWORD: password });
    const events = path.join(home.root, 'events.jsonl');
    const run = await runAxe(
      ['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x', '--verbose', '--events', events],
      { env, cwd: home.root },
    );
    expect(run.code).toBe(3);
    expect(lines(run.stderr).at(-1)).toContain('rejected: *** / ***');
    expect(fake.requests[1]?.toolResults[0]?.content).toContain(password);
    const runs = path.join(home.root, 'data', 'axe', 'runs');
    const recorded = readdirSync(runs, { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile())
      .map((entry) => readFileSync(path.join(entry.parentPath, entry.name), 'utf8'));
    const written = [readFileSync(events, 'utf8'), ...recorded];
    expect(written.join('\n')).toContain('pass ***');
    for (const text of [run.stdout, run.stderr, ...written]) {
      expect(text).not.toContain('MIIEabcdefghijk');
      expect(text).not.toContain('word-123456');
    }
  });

  it('agents show masks a key expanded into a field and names where the key comes from', async () => {
    const { home } = await setup();
    home.agent('w', agentToml('w', { extra: ['workdir = "/tmp/$ANTHROPIC_API_KEY/x"'] }));
    const show = await runAxe(['agents', 'show', 'w', '--agents-dir', home.agentsDir, '--json'], {
      env: home.env(undefined, { ANTHROPIC_API_KEY: KEY }),
    });
    expect(show.code).toBe(0);
    expect(JSON.parse(show.stdout).workdir).toBe('/tmp/***/x');
    expect(JSON.parse(show.stdout).provider).toMatch(/key from ANTHROPIC_API_KEY\)$/);
    expect(show.stdout).not.toContain(KEY);

    const config = path.join(home.configDir, 'config.toml');
    writeFileSync(config, `[providers.anthropic]\napi_key = "${KEY}"\n`);
    chmodSync(config, 0o600);
    home.agent('plain', agentToml('plain'));
    const fromFile = await runAxe(['agents', 'show', 'plain', '--agents-dir', home.agentsDir, '--json'], {
      env: home.env(),
    });
    expect(fromFile).toMatchObject({ code: 0, stderr: '' });
    expect(fromFile.stdout).toContain(
      `key from ${config} (providers.anthropic.api_key; ANTHROPIC_API_KEY would win)`,
    );
    expect(fromFile.stdout).not.toContain(KEY);
  });

  it('warns once when config.toml holds a key and others may read it', async () => {
    const { home, fake } = await setup();
    home.agent('solo', agentToml('solo'));
    const config = path.join(home.configDir, 'config.toml');
    writeFileSync(config, `[providers.anthropic]\napi_key = "${KEY}"\n`);
    chmodSync(config, 0o644);
    fake.respond(() => ({ text: 'ok' }));
    const env = { ...home.env(fake.url), ANTHROPIC_API_KEY: '' };
    const run = await runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x'], { env });
    expect(run).toMatchObject({
      code: 0,
      stdout: 'ok',
      stderr: `Warning: ${config} holds an API key and is readable by others (mode 644): run chmod 600 ${config}\n`,
    });
    chmodSync(config, 0o600);
    expect(await runAxe(['run', 'solo', '--agents-dir', home.agentsDir, '-p', 'x'], { env })).toMatchObject({
      code: 0,
      stderr: '',
    });
  });
});
