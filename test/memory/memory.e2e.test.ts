import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { countEntries, formatEntry, trimEntries } from '../../internal/memory/memory.js';
import { agentToml, callAgent, roleOf } from '../run/agents.js';
import { e2eHomes, lines, runAxe } from '../run/cli.js';

/** `[memory]` through the built binary: Go axe's log, prompt section, warnings and rules. */
const setup = e2eHomes();
const ENTRY =
  /^## \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\n\*\*Task:\*\* (.*)\n\*\*Result:\*\* ([\s\S]*?)\n\n(?=## |$)/;

function memoryAgent(name: string, file: string, extra: string[] = []): string {
  return agentToml(name, { extra: ['[memory]', 'enabled = true', `path = "${file}"`, ...extra] });
}

describe.concurrent('memory', () => {
  it('a successful run appends its task and answer; the next run gets them under ## Memory', async () => {
    const { home, fake } = await setup();
    const file = path.join(home.root, 'mem', 'keeper.md');
    home.agent('keeper', memoryAgent('keeper', file));
    fake.respond((request) => ({ text: `answer to ${request.lastUserText}` }));
    const run = (prompt: string) =>
      runAxe(['run', 'keeper', '--agents-dir', home.agentsDir, '-p', prompt], { env: home.env(fake.url) });
    expect(await run('first\ntask')).toMatchObject({ code: 0, stdout: 'answer to first\ntask', stderr: '' });
    expect(fake.requests[0]?.system).toBe('ROLE:keeper');
    const log = readFileSync(file, 'utf8');
    expect(log).toMatch(ENTRY);
    expect(ENTRY.exec(log)?.slice(1)).toEqual(['first task', 'answer to first\ntask']);

    expect((await run('second')).code).toBe(0);
    expect(fake.requests[1]?.system).toBe(`ROLE:keeper\n\n---\n\n## Memory\n\n${log}`);
    expect(countEntries(readFileSync(file, 'utf8'))).toBe(2);

    const dry = await run('third');
    expect(dry.code).toBe(0);
    const shown = await runAxe(['run', 'keeper', '--agents-dir', home.agentsDir, '-p', 'x', '--dry-run'], {
      env: home.env(),
    });
    expect(shown.stdout).toContain('--- Memory ---\n## ');
    expect(shown.stdout).toContain('**Task:** third');
  });

  it('a failed run and a run over its budget append nothing', async () => {
    const { home, fake } = await setup();
    const file = path.join(home.root, 'keeper.md');
    home.agent('keeper', memoryAgent('keeper', file));
    const base = ['run', 'keeper', '--agents-dir', home.agentsDir, '-p', 'x'];
    fake.enqueue({ fault: { kind: 'status', status: 400 } });
    expect((await runAxe(base, { env: home.env(fake.url) })).code).toBe(1);
    fake.enqueue({ text: 'too long', usage: { input: 90, output: 30 } });
    expect((await runAxe([...base, '--max-tokens', '100'], { env: home.env(fake.url) })).code).toBe(4);
    expect(() => readFileSync(file)).toThrow(/ENOENT/);
  });

  it("max_entries: Go's warning word for word; a sub-agent keeps its own memory with its full task", async () => {
    const { home, fake } = await setup();
    const file = path.join(home.root, 'lead.md');
    const childFile = path.join(home.root, 'child.md');
    writeFileSync(file, [1, 2].map((i) => formatEntry(new Date(), `t${i}`, `r${i}`).toString()).join(''));
    writeFileSync(childFile, formatEntry(new Date(), 'old', 'old').toString());
    // sub_agents before the [memory] table, which would otherwise take it in.
    home.agent(
      'lead',
      `${agentToml('lead', { subAgents: ['child'] })}[memory]\nenabled = true\npath = "${file}"\nmax_entries = 2\nlast_n = 1\n`,
    );
    home.agent('child', memoryAgent('child', childFile, ['max_entries = 1']));
    fake.respond((request) => {
      if (roleOf(request) === 'child') return { text: 'child result' };
      return request.toolResults.length === 0
        ? { toolCalls: [callAgent('child', 'count things')] }
        : { text: 'done' };
    });
    const base = ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'];
    const result = await runAxe(base, { env: home.env(fake.url) });
    expect(result.code).toBe(0);
    expect(lines(result.stderr)).toEqual([
      `Warning: agent "lead" memory has 2 entries (max_entries: 2). Run 'axe gc lead' to trim.`,
    ]);
    // last_n = 1: only the newest entry goes into the prompt.
    expect(fake.requests[0]?.system).toContain('**Task:** t2');
    expect(fake.requests[0]?.system).not.toContain('**Task:** t1');
    const child = fake.requests.find((request) => roleOf(request) === 'child');
    expect(child?.system).toContain('## Memory\n\n## ');
    const childLog = readFileSync(childFile, 'utf8');
    expect(countEntries(childLog)).toBe(2);
    expect(childLog).toContain(
      `**Task:** ${child?.lastUserText.replaceAll('\n', ' ')}\n**Result:** child result\n\n`,
    );

    const verbose = await runAxe([...base, '--verbose'], { env: home.env(fake.url) });
    expect(verbose.stderr).toContain(
      `[sub-agent] Warning: agent "child" memory has 2 entries (max_entries: 1). Run 'axe gc child' to trim.`,
    );
  });

  it('20 runs appending at once while a trim runs: no entry lost, no file cut', async () => {
    const { home, fake } = await setup();
    const file = path.join(home.root, 'busy.md');
    writeFileSync(
      file,
      Array.from({ length: 30 }, (_, i) => formatEntry(new Date(), `seed ${i}`, 'x')).join(''),
    );
    home.agent('busy', memoryAgent('busy', file, ['last_n = 3', 'max_entries = 0']));
    fake.respond((request) => ({ text: `did ${request.lastUserText}`, delayMs: 5 }));
    let trimming = true;
    let removed = 0;
    const trimmer = (async () => {
      while (trimming) {
        removed += await trimEntries(file, 10);
        await new Promise((resolve) => setTimeout(resolve, 3));
      }
    })();
    const runs = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        runAxe(['run', 'busy', '--agents-dir', home.agentsDir, '-p', `job ${i}`], {
          env: home.env(fake.url),
        }),
      ),
    );
    trimming = false;
    await trimmer;
    for (const run of runs) expect(run).toMatchObject({ code: 0, stderr: '' });
    const log = readFileSync(file, 'utf8');
    expect(removed).toBeGreaterThan(0);
    expect(countEntries(log)).toBe(30 + 20 - removed);
    // Every entry whole: the log is a sequence of well-formed entries and nothing else.
    let rest = log;
    while (rest !== '') {
      const match = ENTRY.exec(rest);
      expect(match, rest.slice(0, 200)).not.toBeNull();
      rest = rest.slice(match?.[0].length ?? rest.length);
    }
  });
});
