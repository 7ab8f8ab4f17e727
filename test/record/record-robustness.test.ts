import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../internal/errors.js';
import type { Usage } from '../../internal/provider/types.js';
import type { RunRecord } from '../../internal/record/record.js';
import { RunRecorder, runJsonText } from '../../internal/record/recorder.js';
import { loadRun, readRunRecord } from '../../internal/record/store.js';
import type { RunEventBody } from '../../internal/runner/events.js';
import { failedBeforeStart } from '../../internal/runner/result.js';
import { tempDirForFile } from '../temp-dir.js';
import { request } from './trace-fixture.js';

const AXE_BIN = join(resolve(dirname(fileURLToPath(import.meta.url)), '../..'), 'dist/main.js');
const MiB = 2 ** 20;

const usage: Usage = { inputTokens: 10, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0 };

/**
 * A finished run of `lead` asked `input`, as the top-level agent records it: its task and (unless
 * `told` is false) its first message.
 */
async function recordRun(
  input = request.input,
  root = tempDirForFile('axe-robust-'),
  told = true,
): Promise<{ runsDir: string; id: string; dir: string }> {
  const runsDir = join(root, 'runs');
  const recorder = await RunRecorder.open(runsDir, { ...request, input }, {}, (message) => {
    throw new Error(message);
  });
  if (!recorder) throw new Error('no recorder');
  const t0 = Date.now();
  const event = (body: RunEventBody): void =>
    recorder.observe({ path: 'lead', agent: 'lead', depth: 0, time: t0, ...body });
  event({ type: 'agent.start', model: 'anthropic/claude-x', task: input });
  if (told) event({ type: 'message', message: { role: 'user', content: input } });
  event({ type: 'message', message: { role: 'assistant', content: 'Done.' } });
  event({
    type: 'agent.end',
    status: 'completed',
    durationMs: 5,
    usage,
    chars: 5,
    content: 'Done.',
    turns: 1,
    toolCalls: 0,
  });
  const result = {
    ...failedBeforeStart({ agent: 'lead', path: 'lead', depth: 0 }, 'completed', '', 5),
    usage,
  };
  await recorder.finish({ result, budget: { used: 15 } }, 0, new Date(t0 + 10));
  return { runsDir, id: recorder.id, dir: join(runsDir, recorder.id) };
}

/** `axe` (the built CLI) with its data dir at `root`. */
function axe(root: string, ...args: string[]) {
  const run = spawnSync(process.execPath, [AXE_BIN, ...args], {
    env: {
      PATH: process.env.PATH ?? '',
      HOME: root,
      XDG_DATA_HOME: root,
      XDG_CONFIG_HOME: join(root, 'cfg'),
    },
    encoding: 'utf8',
  });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

type Json = Record<string, unknown>;

describe('a run.json that is not what axe wrote', () => {
  const broken: [string, (record: Json & { request: Json }) => void][] = [
    ['"startedAt" must be a string', (r) => delete r.startedAt],
    ['"request" must be an object', (r) => (r.request = undefined as unknown as Json)],
    ['"request.agent" must be a string', (r) => (r.request.agent = 5)],
    ['"request.agentsDirs" must be a list of strings', (r) => (r.request.agentsDirs = '/agents')],
    ['"request.stream" must be true or false', (r) => (r.request.stream = 'no')],
    ['"pid" must be a process id (a whole number above 0)', (r) => (r.pid = 0)],
    ['"status" must be a string', (r) => (r.status = null)],
    ['"durationMs" must be a number', (r) => (r.durationMs = '5')],
    ['"usage.total" must be a number', (r) => (r.usage = { inputTokens: 1 })],
    ['"cost" must be a number', (r) => (r.cost = '0.1')],
    ['"tree" must be an object', (r) => (r.tree = [])],
  ];

  it('is a ConfigError naming the file and the field, for runs list, runs show and --resume alike', async () => {
    const { runsDir, id, dir } = await recordRun();
    const file = join(dir, 'run.json');
    const good = readFileSync(file, 'utf8');
    for (const [message, breakIt] of broken) {
      const record = JSON.parse(good);
      breakIt(record);
      writeFileSync(file, JSON.stringify(record));
      for (const read of [readRunRecord, loadRun]) {
        const failed = await read(runsDir, id).catch((error: unknown) => error);
        expect(failed, message).toBeInstanceOf(ConfigError);
        expect((failed as Error).message).toBe(`${file}: ${message}`);
      }
    }
    // Only the version and the id: the first field it lacks is named.
    writeFileSync(file, JSON.stringify({ version: 1, id }));
    await expect(readRunRecord(runsDir, id)).rejects.toThrow(/run\.json: "\w+(\.\w+)?" must be /);
    // Not an object at all.
    writeFileSync(file, 'null');
    await expect(readRunRecord(runsDir, id)).rejects.toThrow(
      `${file}: cannot read the run record (not a run record of this axe)`,
    );
    // What axe wrote is read back whole.
    writeFileSync(file, good);
    expect(await readRunRecord(runsDir, id)).toEqual(JSON.parse(good));
  });

  it('the CLI: runs list skips it with one warning naming the file, runs show is exit 2 with one line', async () => {
    const root = tempDirForFile('axe-robust-cli-');
    const bad = await recordRun(request.input, join(root, 'axe'));
    const good = await recordRun(request.input, join(root, 'axe'));
    const file = join(bad.dir, 'run.json');
    writeFileSync(file, JSON.stringify({ version: 1, id: bad.id, pid: 1, status: 'completed', request }));

    const list = axe(root, 'runs', 'list');
    expect(list.code, list.stderr).toBe(0);
    expect(list.stderr).toBe(`Warning: skipped ${file}: "startedAt" must be a string\n`);
    expect(list.stdout).toContain(good.id);
    expect(list.stdout).not.toContain(bad.id);

    const show = axe(root, 'runs', 'show', bad.id);
    expect(show.code).toBe(2);
    expect(show.stderr).toBe(`axe: ${file}: "startedAt" must be a string\n`);

    writeFileSync(file, JSON.stringify({ version: 1, id: bad.id }));
    const listed = axe(root, 'runs', 'list');
    expect(listed.code).toBe(0);
    expect(listed.stderr).toMatch(new RegExp(`^Warning: skipped ${file}: "[\\w.]+" must be [^\\n]+\\n$`));
  });
});

describe('a transcript that cannot be read', () => {
  it('is a ConfigError naming the transcript and why: a directory, a FIFO, an oversize line', async () => {
    const { runsDir, id, dir } = await recordRun();
    const [name] = readdirSync(join(dir, 'agents'));
    const transcript = join(dir, 'agents', name as string);
    const cases: [string, () => void][] = [
      ['is a directory, not a regular file', () => mkdirSync(transcript)],
      ['is a FIFO, not a regular file', () => execFileSync('mkfifo', [transcript])],
      [
        // Transcripts are read line by line, of any size: one line is what is bounded.
        'has a line larger than 256 MiB',
        () => {
          writeFileSync(transcript, '');
          truncateSync(transcript, 256 * MiB + 1);
        },
      ],
    ];
    for (const [reason, replace] of cases) {
      rmSync(transcript, { recursive: true, force: true });
      replace();
      const failed = await loadRun(runsDir, id).catch((error: unknown) => error);
      expect(failed, reason).toBeInstanceOf(ConfigError);
      expect((failed as Error).message).toBe(`${transcript}: cannot read the transcript (${reason})`);
    }
  });

  it('the CLI: runs show is exit 2 with one line naming it', async () => {
    const root = tempDirForFile('axe-robust-cli-');
    const { dir } = await recordRun(request.input, join(root, 'axe'));
    const [name] = readdirSync(join(dir, 'agents'));
    const transcript = join(dir, 'agents', name as string);
    rmSync(transcript);
    mkdirSync(transcript);
    const show = axe(root, 'runs', 'show', 'last');
    expect(show.code).toBe(2);
    expect(show.stderr).toBe(
      `axe: ${transcript}: cannot read the transcript (is a directory, not a regular file)\n`,
    );
  });
});

describe('the record is the user’s only', () => {
  it('the runs directory, a run’s directory and agents/ are 0700; run.json and the transcripts 0600', async () => {
    const { runsDir, dir } = await recordRun();
    const mode = (path: string) => statSync(path).mode & 0o777;
    expect(mode(runsDir).toString(8)).toBe('700');
    expect(mode(dir).toString(8)).toBe('700');
    expect(mode(join(dir, 'agents')).toString(8)).toBe('700');
    expect(mode(join(dir, 'run.json')).toString(8)).toBe('600');
    for (const name of readdirSync(join(dir, 'agents'))) {
      expect(mode(join(dir, 'agents', name)).toString(8)).toBe('600');
    }
  });
});

describe('a run with a large input', () => {
  it('writes a run.json axe reads back: 9 MB of piped input, held as the request and as the task', async () => {
    const input = `${'x'.repeat(9_000_000)}\nEND`;
    const { runsDir, id, dir } = await recordRun(input);
    expect(statSync(join(dir, 'run.json')).size).toBeGreaterThan(18_000_000);
    const run = await loadRun(runsDir, id);
    expect(run.record.request.input).toBe(input);
    expect(run.record.tree?.task).toBe(input);
    expect(run.tree?.task).toBe(input);
  });

  it('a tree that would take run.json past what axe reads is left out of it (the transcripts hold it)', () => {
    const record: RunRecord = JSON.parse(
      JSON.stringify({
        version: 1,
        id: 'x',
        pid: 1,
        request,
        startedAt: '2026-01-01T00:00:00.000Z',
        status: 'completed',
        tree: { path: 'lead', task: 'y'.repeat(5000), children: [] },
      }),
    );
    const whole = runJsonText(record, 100_000);
    expect(JSON.parse(whole).tree.task).toHaveLength(5000);
    const cut = runJsonText(record, 4000);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(4000);
    expect(JSON.parse(cut)).toEqual({ ...record, tree: undefined });
    expect(record.tree).toBeDefined();
  });
});
