import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ScriptedReply } from '../fake-llm/types.js';
import { agentToml } from '../run/agents.js';
import { e2eHomes, runAxe, startAxe, type TempHome, waitFor } from '../run/cli.js';

/**
 * Records stay readable whatever the tools return: 17 reads of a 9 MB file were a 292 MiB
 * transcript that `runs show`, `--resume` and `--continue` refused. An output over
 * OUTPUT_INLINE_MAX (64 Ki) is stored once, apart from the transcript, and put back when the
 * record is read. The same 17 reads of a 270 KB file here (FILE_LINES = 2000 is the 9 MB case:
 * it passes too, in about 40 s and 1 GB of this process's memory).
 */
const setup = e2eHomes();

const READS = 17;

function bytesUnder(dir: string): number {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .reduce((sum, entry) => sum + statSync(path.join(entry.parentPath, entry.name)).size, 0);
}

const FILE_LINES = 60;
const LINE = 'x'.repeat(4499);
const FILE_BYTES = FILE_LINES * (LINE.length + 1);

function bigFile(home: TempHome): void {
  home.file('big.txt', `${Array.from({ length: FILE_LINES }, () => LINE).join('\n')}\n`);
}

describe('a run whose tools return large outputs', () => {
  it('17 reads of a large file: a small transcript; runs show, --html, --resume and --continue read it back whole', async () => {
    const { home, fake } = await setup();
    bigFile(home);
    home.agent('reader', agentToml('reader', { extra: ['tools = ["read_file"]'] }));
    let release = (): void => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    fake.respond(async (r): Promise<ScriptedReply> => {
      if (r.toolResults.length === 0) {
        return {
          toolCalls: Array.from({ length: READS }, () => ({
            name: 'read_file',
            arguments: { path: 'big.txt' },
          })),
        };
      }
      if (r.lastUserText === 'more') return { text: 'continued' };
      await gate;
      return { text: `read ${r.toolResults.length}` };
    });
    const env = home.env(fake.url);
    const first = startAxe(['run', 'reader', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env,
      cwd: home.root,
    });
    const [id] = await (async () => {
      await waitFor(() => fake.requests.length === 2, 60_000);
      return home.runIds() as [string];
    })();
    // Killed once the tool message is in the record, while the next model turn waits.
    const agents = path.join(home.runsDir, id, 'agents');
    await waitFor(
      () =>
        readdirSync(agents).some((name) =>
          readFileSync(path.join(agents, name), 'utf8').includes('"role":"tool"'),
        ),
      60_000,
    );
    const sent = fake.requests[1]?.toolResults.map((t) => t.content) ?? [];
    expect(sent).toHaveLength(READS);
    expect(sent[0]?.length).toBeGreaterThan(FILE_BYTES);
    first.kill('SIGKILL');
    await first.done;

    // Each output once, apart; the transcripts small.
    expect(bytesUnder(agents)).toBeLessThan(FILE_BYTES);
    const outputs = readdirSync(path.join(home.runsDir, id, 'outputs'));
    expect(outputs).toHaveLength(READS);

    const shown = await runAxe(['runs', 'show', id], { env });
    expect(shown.code, shown.stderr).toBe(0);
    const html = await runAxe(['runs', 'show', id, '--html'], { env });
    expect(html.code, html.stderr).toBe(0);

    release();
    const resumed = await runAxe(['run', '--resume', id], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toBe(`read ${READS}`);
    // The turn sent again holds every output as the tools returned it.
    expect(fake.requests[2]?.toolResults.map((t) => t.content)).toEqual(sent);

    const newer = home.runIds().at(-1) as string;
    const continued = await runAxe(
      ['run', 'reader', '--agents-dir', home.agentsDir, '--continue', newer, '-p', 'more'],
      {
        env,
        cwd: home.root,
      },
    );
    expect(continued.code, continued.stderr).toBe(0);
    expect(continued.stdout).toBe('continued');
    // The conversation it follows, outputs included.
    expect(JSON.stringify(fake.requests.at(-1)?.body).length).toBeGreaterThan(READS * FILE_BYTES);
  });
});
