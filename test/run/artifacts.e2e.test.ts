import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fake-llm/types.js';
import { agentToml, callAgent, roleOf } from './agents.js';
import { e2eHomes, lines, runAxe, startAxe, waitFor } from './cli.js';

/** Go axe's artifacts (specs 042 / 044 / 047) through the built binary. */
const setup = e2eHomes();

function artifactAgent(name: string, artifacts: string[], extra: string[] = []): string {
  return agentToml(name, {
    extra: [
      'tools = ["write_file", "read_file", "list_directory", "run_command"]',
      ...extra,
      '[artifacts]',
      ...artifacts,
    ],
  });
}

const write = (file: string, content: string, artifact?: unknown) => ({
  name: 'write_file',
  arguments: artifact === undefined ? { path: file, content } : { path: file, content, artifact },
});

function toolParameters(request: RecordedRequest | undefined, tool: string): Record<string, unknown> {
  const body = (request?.body ?? {}) as {
    tools?: { name: string; input_schema: { properties: Record<string, unknown> } }[];
  };
  const tools = body.tools;
  return tools?.find((t) => t.name === tool)?.input_schema.properties ?? {};
}

/** A responder that makes the given calls one per turn, then answers with every tool result. */
function callsThenEcho(...calls: ReturnType<typeof write>[]) {
  return (request: RecordedRequest) => {
    const next = calls[request.toolResults.length];
    return next ? { toolCalls: [next] } : { text: request.toolResults.map((r) => r.content).join(' | ') };
  };
}

describe.concurrent('artifacts', () => {
  it('an auto directory under <cache>/artifacts: written, listed in --json, removed after the run', async () => {
    const { home, fake } = await setup();
    home.agent('maker', artifactAgent('maker', ['enabled = true']));
    fake.respond(
      callsThenEcho(
        write('report.md', 'hello', true),
        write('./report.md', 'hello!', 'true'),
        write('plain.txt', 'x'),
      ),
    );
    const result = await runAxe(['run', 'maker', '--agents-dir', home.agentsDir, '-p', 'go', '--json'], {
      env: home.env(fake.url),
      cwd: home.root,
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const envelope = JSON.parse(result.stdout);
    expect(envelope.content).toBe(
      'wrote 5 bytes to report.md (artifact) | wrote 6 bytes to ./report.md (artifact) | wrote 1 bytes to plain.txt',
    );
    // A file written twice is listed once, with its last size.
    expect(envelope.artifacts).toEqual([{ path: 'report.md', agent: 'maker', size: 6 }]);
    expect(readFileSync(path.join(home.root, 'plain.txt'), 'utf8')).toBe('x');
    // The parameter is offered only to an agent whose artifact system is on.
    expect(toolParameters(fake.requests[0], 'write_file')).toHaveProperty('artifact');
    expect(toolParameters(fake.requests[0], 'read_file')).toHaveProperty('artifact');
    expect(toolParameters(fake.requests[0], 'run_command')).not.toHaveProperty('artifact');
    const parent = path.join(home.root, 'cache', 'axe', 'artifacts');
    expect(readdirSync(parent)).toEqual([]);
  });

  it('--keep-artifacts keeps the auto directory and says where; its name is Go’s <YYYYMMDDTHHMMSS>-<6 hex>', async () => {
    const { home, fake } = await setup();
    home.agent('maker', artifactAgent('maker', ['enabled = true', 'default_write = true']));
    fake.respond(callsThenEcho(write('a.md', 'default'), write('b.md', 'explicit', 'false')));
    const result = await runAxe(
      ['run', 'maker', '--agents-dir', home.agentsDir, '-p', 'go', '--keep-artifacts'],
      {
        env: home.env(fake.url),
        cwd: home.root,
      },
    );
    expect(result.code).toBe(0);
    const [line] = lines(result.stderr);
    const dir = /^artifacts preserved: (.*)$/.exec(line ?? '')?.[1] ?? '';
    expect(path.basename(dir)).toMatch(/^\d{8}T\d{6}-[0-9a-f]{6}$/);
    expect(path.dirname(dir)).toBe(path.join(home.root, 'cache', 'axe', 'artifacts'));
    // default_write sends an argument-less write there; an explicit "false" goes to the workdir.
    expect(readFileSync(path.join(dir, 'a.md'), 'utf8')).toBe('default');
    expect(readFileSync(path.join(home.root, 'b.md'), 'utf8')).toBe('explicit');
  });

  it('--artifact-dir turns artifacts on, relative to the workdir; a persistent dir is never removed', async () => {
    const { home, fake } = await setup();
    const workdir = path.join(home.root, 'work');
    mkdirSync(workdir);
    home.agent(
      'plain',
      agentToml('plain', { extra: ['tools = ["write_file", "list_directory", "run_command"]'] }),
    );
    fake.respond((request) =>
      request.toolResults.length === 0
        ? {
            toolCalls: [
              write('notes/n.md', 'n', true),
              { name: 'run_command', arguments: { command: 'printf "%s" "$AXE_ARTIFACT_DIR"' } },
            ],
          }
        : request.toolResults.length === 2
          ? { toolCalls: [{ name: 'list_directory', arguments: { path: 'notes', artifact: 'TRUE' } }] }
          : { text: request.toolResults.map((r) => r.content).join(' | ') },
    );
    const args = ['run', 'plain', '--agents-dir', home.agentsDir, '-p', 'go', '--workdir', workdir];
    const result = await runAxe([...args, '--artifact-dir', 'out', '--json'], { env: home.env(fake.url) });
    expect(result.code).toBe(0);
    const out = path.join(workdir, 'out');
    expect(readFileSync(path.join(out, 'notes', 'n.md'), 'utf8')).toBe('n');
    const envelope = JSON.parse(result.stdout);
    expect(envelope.artifacts).toEqual([{ path: 'notes/n.md', agent: 'plain', size: 1 }]);
    expect(fake.requests[1]?.toolResults.map((r) => r.content)).toEqual([
      'wrote 1 bytes to notes/n.md (artifact)',
      out,
    ]);
    expect(envelope.content).toMatch(/ \| n\.md$/);
  });

  it('artifact = true without an artifact directory, or escaping it: Go’s error results', async () => {
    const { home, fake } = await setup();
    home.agent('plain', agentToml('plain', { extra: ['tools = ["write_file"]'] }));
    home.agent('boxed', artifactAgent('boxed', ['enabled = true']));
    fake.respond((request) => {
      if (request.toolResults.length > 0) return { text: request.toolResults[0]?.content ?? '' };
      return { toolCalls: [write(roleOf(request) === 'plain' ? 'x.md' : '../x.md', 'x', true)] };
    });
    const plain = await runAxe(['run', 'plain', '--agents-dir', home.agentsDir, '-p', 'go', '--json'], {
      env: home.env(fake.url),
      cwd: home.root,
    });
    expect(JSON.parse(plain.stdout).content).toBe('artifact directory not configured for this agent');
    expect(JSON.parse(plain.stdout)).not.toHaveProperty('artifacts');
    expect(toolParameters(fake.requests[0], 'write_file')).not.toHaveProperty('artifact');
    const boxed = await runAxe(['run', 'boxed', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
      cwd: home.root,
    });
    expect(boxed.stdout).toMatch(/^path "\.\.\/x\.md" escapes the artifact directory \(/);
  });

  it('a sub-agent shares the run’s directory through $AXE_ARTIFACT_DIR; its writes are listed with its name', async () => {
    const { home, fake } = await setup();
    home.agent(
      'lead',
      `${artifactAgent('lead', ['enabled = true', 'dir = "shared"'], ['sub_agents = ["helper"]'])}`,
    );
    home.agent('helper', artifactAgent('helper', ['enabled = true', `dir = "\${AXE_ARTIFACT_DIR}"`]));
    fake.respond((request) => {
      const role = roleOf(request);
      if (request.toolResults.length > 0) return { text: `${role} done` };
      return role === 'helper'
        ? { toolCalls: [write('from-helper.md', 'hh', true)] }
        : { toolCalls: [write('from-lead.md', 'l', true), callAgent('helper', 'write it')] };
    });
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--json'], {
      env: home.env(fake.url),
      cwd: home.root,
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const shared = path.join(home.root, 'shared');
    expect(readdirSync(shared).sort()).toEqual(['from-helper.md', 'from-lead.md']);
    const listed = JSON.parse(result.stdout).artifacts;
    expect(listed).toHaveLength(2);
    expect(listed).toEqual(
      expect.arrayContaining([
        { path: 'from-lead.md', agent: 'lead', size: 1 },
        { path: 'from-helper.md', agent: 'helper', size: 2 },
      ]),
    );
  });

  it('the auto directory is removed when the run fails and when it is interrupted', async () => {
    const { home, fake } = await setup();
    home.agent('maker', artifactAgent('maker', ['enabled = true']));
    const parent = path.join(home.root, 'cache', 'axe', 'artifacts');
    fake.enqueue({ toolCalls: [write('a.md', 'a', true)] }, { fault: { kind: 'status', status: 400 } });
    const failed = await runAxe(['run', 'maker', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
      cwd: home.root,
    });
    expect(failed.code).toBe(1);
    expect(readdirSync(parent)).toEqual([]);

    fake.reset();
    fake.respond((request) =>
      request.toolResults.length === 0
        ? { toolCalls: [write('a.md', 'a', true)] }
        : { text: 'late', delayMs: 30_000 },
    );
    const running = startAxe(['run', 'maker', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
      cwd: home.root,
    });
    await waitFor(() => fake.requests.length === 2, 10_000);
    expect(readdirSync(parent)).toHaveLength(1);
    running.kill('SIGINT');
    const interrupted = await running.done;
    expect(interrupted.code).toBe(130);
    expect(readdirSync(parent)).toEqual([]);
  });

  it('dir without enabled is Go’s config error; --dry-run creates nothing', async () => {
    const { home, fake } = await setup();
    home.agent('bad', artifactAgent('bad', ['dir = "x"']));
    const bad = await runAxe(['run', 'bad', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('artifacts.dir is set but artifacts.enabled is false');
    home.agent('maker', artifactAgent('maker', ['enabled = true', 'dir = "made"']));
    const dry = await runAxe(['run', 'maker', '--agents-dir', home.agentsDir, '--dry-run'], {
      env: home.env(),
      cwd: home.root,
    });
    expect(dry.code).toBe(0);
    expect(existsSync(path.join(home.root, 'made'))).toBe(false);
    writeFileSync(path.join(home.root, 'made'), 'a file, not a directory');
    const blocked = await runAxe(['run', 'maker', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
      cwd: home.root,
    });
    expect(blocked.code).toBe(1);
    expect(lines(blocked.stderr)).toEqual([
      expect.stringMatching(/^axe: failed to create artifact directory: .*made: already exists$/),
    ]);
    expect(fake.requests).toHaveLength(0);
  });
});
