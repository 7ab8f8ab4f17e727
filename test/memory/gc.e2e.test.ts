import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { countEntries, formatEntry } from '../../internal/memory/memory.js';
import { agentToml } from '../run/agents.js';
import { e2eHomes, runAxe, type TempHome } from '../run/cli.js';

/** `axe gc` through the built binary: Go's messages, Go's one model call, an atomic trim. */
const setup = e2eHomes();

function keeper(home: TempHome, name: string, entries: number, memory: string[] = []): string {
  const file = path.join(home.root, `${name}.md`);
  const log = Array.from({ length: entries }, (_, i) =>
    formatEntry(new Date(Date.UTC(2026, 0, 1, 0, 0, i)), `task ${i}`, `result ${i}`).toString(),
  ).join('');
  writeFileSync(file, log);
  home.agent(
    name,
    agentToml(name, {
      extra: ['workdir = "/no/such/dir"', '[memory]', 'enabled = true', `path = "${file}"`, ...memory],
    }),
  );
  return file;
}

describe.concurrent('axe gc', () => {
  it("argument errors, no memory, no entries: Go's words and exit codes", async () => {
    const { home } = await setup();
    const env = home.env();
    const dirs = ['--agents-dir', home.agentsDir];
    expect(await runAxe(['gc', ...dirs], { env })).toMatchObject({
      code: 1,
      stderr: 'axe: agent name is required (or use --all)\n',
    });
    expect(await runAxe(['gc', 'x', '--all', ...dirs], { env })).toMatchObject({
      code: 1,
      stderr: 'axe: cannot specify both --all and an agent name\n',
    });
    expect((await runAxe(['gc', 'nobody', ...dirs], { env })).code).toBe(2);
    home.agent('plain', agentToml('plain'));
    expect(await runAxe(['gc', 'plain', ...dirs], { env })).toMatchObject({
      code: 0,
      stdout: '',
      stderr: 'Warning: agent "plain" does not have memory enabled. Skipping.\n',
    });
    keeper(home, 'empty', 0);
    expect(await runAxe(['gc', 'empty', ...dirs], { env })).toMatchObject({
      code: 0,
      stdout: 'No memory entries for agent "empty". Nothing to do.\n',
    });
    expect(
      await runAxe(['gc', '--all', '--agents-dir', path.join(home.root, 'none')], { env: home.env() }),
    ).toMatchObject({
      code: 0,
      stdout: 'No agents with memory enabled.\n',
    });
    // Go's gc: a missing key is exit 3 (run says 2), after Agent: / Entries:.
    keeper(home, 'keyless', 2);
    expect(await runAxe(['gc', 'keyless', ...dirs], { env })).toMatchObject({
      code: 3,
      stdout: 'Agent: keyless\nEntries: 2\n',
      stderr:
        'axe: API key for provider "anthropic" is not configured (set ANTHROPIC_API_KEY or add to config.toml)\n',
    });
  });

  it('analyses the whole log in one call, prints it, trims to last_n atomically (mode kept); --dry-run trims nothing', async () => {
    const { home, fake } = await setup();
    const file = keeper(home, 'keeper', 5, ['last_n = 2']);
    chmodSync(file, 0o600);
    const log = readFileSync(file, 'utf8');
    fake.respond(() => ({ text: '## Patterns Found\nNone.' }));
    const dirs = ['--agents-dir', home.agentsDir];
    const dry = await runAxe(['gc', 'keeper', '--dry-run', ...dirs], { env: home.env(fake.url) });
    expect(dry).toMatchObject({
      code: 0,
      stdout:
        'Agent: keeper\nEntries: 5\n--- Analysis ---\n## Patterns Found\nNone.\nDry run: no entries trimmed.\n',
      stderr: '',
    });
    expect(readFileSync(file, 'utf8')).toBe(log);
    const [call] = fake.requests;
    expect(call?.body).toMatchObject({ temperature: 0.3, max_tokens: 4096 });
    expect(call?.body).not.toHaveProperty('tools');
    expect(call?.system).toMatch(/^You are a memory analyst for an AI agent\./);
    expect(call?.system).toContain('## Repeated Work');
    expect(call?.lastUserText).toBe(log);

    const trimmed = await runAxe(['gc', 'keeper', ...dirs], { env: home.env(fake.url) });
    expect(trimmed.stdout).toBe(
      'Agent: keeper\nEntries: 5\n--- Analysis ---\n## Patterns Found\nNone.\nTrimmed: 3 entries removed, 2 entries kept.\n',
    );
    const kept = readFileSync(file, 'utf8');
    expect(countEntries(kept)).toBe(2);
    expect(kept).toBe(log.slice(log.indexOf('## ', log.indexOf('**Task:** task 2'))));
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const again = await runAxe(['gc', 'keeper', ...dirs], { env: home.env(fake.url) });
    expect(again.stdout).toMatch(/No trimming needed: 2 entries within limit \(2\)\.\n$/);
  });

  it('--all: a section per agent, a failure named and counted (exit 1); replayable from a cassette', async () => {
    const { home, fake } = await setup();
    keeper(home, 'alpha', 3, ['last_n = 1']);
    keeper(home, 'beta', 2, ['last_n = 0', 'max_entries = 1']);
    home.agent('plain', agentToml('plain'));
    fake.respond((request) =>
      request.lastUserText.includes('result 2')
        ? { text: 'alpha report' }
        : { fault: { kind: 'status', status: 400 } },
    );
    const all = await runAxe(['gc', '--all', '--agents-dir', home.agentsDir], { env: home.env(fake.url) });
    expect(all.code).toBe(1);
    expect(all.stdout).toBe(
      '=== GC: alpha ===\nAgent: alpha\nEntries: 3\n--- Analysis ---\nalpha report\nTrimmed: 2 entries removed, 1 entries kept.\n=== GC: beta ===\nAgent: beta\nEntries: 2\n',
    );
    expect(all.stderr).toMatch(
      /^Error: gc failed for agent "beta": anthropic: .*\naxe: gc completed with errors: 1 of 2 agents failed\n$/,
    );

    const cassette = path.join(home.root, 'gc.jsonl');
    fake.respond(() => ({ text: 'beta report' }));
    const recorded = await runAxe(
      ['gc', 'beta', '--dry-run', '--record', cassette, '--agents-dir', home.agentsDir],
      {
        env: home.env(fake.url),
      },
    );
    const replayed = await runAxe(
      ['gc', 'beta', '--dry-run', '--replay', cassette, '--agents-dir', home.agentsDir],
      {
        env: home.env(),
      },
    );
    expect(replayed).toMatchObject({ code: 0, stdout: recorded.stdout });
    expect(replayed.stdout).toContain('beta report');
  });
});
