import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FakeLlm } from '../fake-llm/types.js';
import { agentToml } from './agents.js';
import { e2eHomes, runAxe, type TempHome } from './cli.js';

/**
 * A known secret reaches nothing axe writes: one row per sink (every place axe writes text), each
 * with a run that sends the secret there. Each row checks both that the secret got to the sink
 * (masked, as `***`) and that it is not there as it is, so a row fails when its sink's mask is
 * removed, and cannot pass because its run never reached the sink.
 *
 * A new sink is a new row. Still to come, as rows here when those features land: the lines of
 * batch output, and the attributes of exported trace spans.
 */
const setup = e2eHomes();
const KEY = 'sk-live-0123456789abcdef';
/** A secret the run did not know, known when the record is shown: the showing masks it itself. */
const LATE = 'late-secret-9876543210';

interface Scene {
  home: TempHome;
  fake: FakeLlm;
  env: NodeJS.ProcessEnv;
  /** `axe run <agent> --agents-dir … -p x` with `extra`, in the home's root. */
  run(agent: string, extra?: string[], env?: NodeJS.ProcessEnv): ReturnType<typeof runAxe>;
}

async function scene(): Promise<Scene> {
  const { home, fake } = await setup();
  const env = home.env(fake.url, { ANTHROPIC_API_KEY: KEY });
  // The model echoes the key it was sent: in a tool call's argument, then in its answer.
  fake.respond((request) => {
    const key = request.headers['x-api-key'];
    return request.toolResults.length === 0
      ? { toolCalls: [{ name: 'read_file', arguments: { path: `notes-${key}.txt` } }] }
      : { text: `auth=${key}` };
  });
  home.agent('echo', agentToml('echo', { extra: ['tools = ["read_file"]'] }));
  return {
    home,
    fake,
    env,
    run: (agent, extra = [], runEnv = env) =>
      runAxe(['run', agent, '--agents-dir', home.agentsDir, '-p', 'x', ...extra], {
        env: runEnv,
        cwd: home.root,
      }),
  };
}

/** Every file under `dir`, read. */
function filesUnder(dir: string): string {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => readFileSync(path.join(entry.parentPath, entry.name), 'utf8'))
    .join('\n');
}

/** A run recorded while `LATE` was no secret (in the task and the model's error), then shown with it as one. */
async function shownLate(s: Scene, show: string[]): Promise<string> {
  // The run fails on the model's error, which `runs show` prints.
  s.fake.respond(() => ({ fault: { kind: 'status', status: 400, message: `said ${LATE}` } }));
  s.home.agent('plain', agentToml('plain'));
  // In the task too: `runs show` and its `--json` show the task, not the answer.
  const run = await runAxe(['run', 'plain', '--agents-dir', s.home.agentsDir, '-p', `task ${LATE}`], {
    env: s.env,
    cwd: s.home.root,
  });
  expect(run.code).toBe(1);
  const shown = await runAxe(['runs', 'show', 'last', ...show], {
    env: { ...s.env, LATE_TOKEN: LATE },
    cwd: s.home.root,
  });
  expect(shown.code).toBe(0);
  return shown.stdout;
}

interface Sink {
  sink: string;
  /** Runs axe so that the secret reaches the sink; what the sink got. */
  written(s: Scene): Promise<string>;
  /** The secret is also kept out by an earlier mask: this row fails only when both are removed. */
  secret?: string;
}

const SINKS: Sink[] = [
  { sink: 'stdout: the answer', written: async (s) => (await s.run('echo')).stdout },
  { sink: 'stdout: --stream', written: async (s) => (await s.run('echo', ['--stream'])).stdout },
  { sink: 'stdout: --json', written: async (s) => (await s.run('echo', ['--json'])).stdout },
  { sink: 'stderr: --verbose', written: async (s) => (await s.run('echo', ['--verbose'])).stderr },
  {
    sink: 'stderr: the live tree and the lines above it',
    written: async (s) => (await s.run('echo', ['--verbose', '--progress', 'always'])).stderr,
  },
  {
    sink: 'stderr: a warning',
    written: async (s) => {
      mkdirSync(path.join(s.home.root, `memory-${KEY}`));
      s.home.agent(
        'remembers',
        agentToml('remembers', {
          extra: ['[memory]', 'enabled = true', 'path = "$HOME/memory-$ANTHROPIC_API_KEY"'],
        }),
      );
      s.fake.respond(() => ({ text: 'ok' }));
      const run = await s.run('remembers');
      expect(run.stderr).toMatch(/^Warning: failed to load memory/);
      return run.stderr;
    },
  },
  {
    sink: 'stderr: the final error line',
    written: async (s) => {
      s.home.agent('w', agentToml('w', { extra: ['workdir = "/nonexistent/$ANTHROPIC_API_KEY"'] }));
      const run = await s.run('w');
      expect(run.code).toBe(2);
      return run.stderr;
    },
  },
  {
    sink: '--events FILE',
    written: async (s) => {
      const events = path.join(s.home.root, 'events.jsonl');
      expect((await s.run('echo', ['--stream', '--events', events])).code).toBe(0);
      return readFileSync(events, 'utf8');
    },
  },
  { sink: '--events - (stderr)', written: async (s) => (await s.run('echo', ['--events', '-'])).stderr },
  {
    sink: "the run record's run.json",
    written: async (s) => {
      // The task is in run.json (the request, the tree); the answer is in the transcripts only.
      const run = await runAxe(['run', 'echo', '--agents-dir', s.home.agentsDir, '-p', `use ${KEY}`], {
        env: s.env,
        cwd: s.home.root,
      });
      expect(run.code).toBe(0);
      const [id] = s.home.runIds();
      return readFileSync(path.join(s.home.runsDir, id ?? '', 'run.json'), 'utf8');
    },
  },
  {
    sink: "the run record's transcripts",
    written: async (s) => {
      expect((await s.run('echo')).code).toBe(0);
      const [id] = s.home.runIds();
      return filesUnder(path.join(s.home.runsDir, id ?? '', 'agents'));
    },
  },
  {
    sink: 'a cassette (--record)',
    written: async (s) => {
      const cassette = path.join(s.home.root, 'run.jsonl');
      expect((await s.run('echo', ['--stream', '--record', cassette])).code).toBe(0);
      return readFileSync(cassette, 'utf8');
    },
  },
  { sink: 'runs show', written: (s) => shownLate(s, []), secret: LATE },
  { sink: 'runs show --json', written: (s) => shownLate(s, ['--json']), secret: LATE },
  { sink: 'runs show --transcript', written: (s) => shownLate(s, ['--transcript', 'plain']), secret: LATE },
  { sink: 'the HTML trace (runs show --html)', written: (s) => shownLate(s, ['--html']), secret: LATE },
];

describe.concurrent('a secret reaches no sink', () => {
  it.each(SINKS)('$sink', async ({ written, secret = KEY }) => {
    const s = await scene();
    const text = await written(s);
    expect(text).toContain('***');
    expect(text).not.toContain(secret);
  });
});
