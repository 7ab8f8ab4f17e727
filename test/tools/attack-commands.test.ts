import { spawnSync } from 'node:child_process';
import { userInfo } from 'node:os';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILTIN_TOOLS } from '../../internal/tools/index.js';
import { commandEnv } from '../../internal/tools/run-command.js';
import {
  type AttackBox,
  expectEscapesUnguarded,
  expectRefused,
  outsideChanged,
  revealsOutside,
  useAttackBox,
} from './attack-box.js';
import { call, toolContext } from './helpers.js';

/**
 * Escape attempts through `run_command`. Each command is first run by plain `sh -c` in a fresh
 * box to prove it reads or changes something outside the workdir; through the tool the guard
 * must refuse it. The guard is a heuristic, not a sandbox (docs/tools.md says so).
 */
const currentBox = useAttackBox();

const { run_command } = BUILTIN_TOOLS;
/** `~<me>/../../etc/passwd`: HOME is the workdir for commands, but `~user` still names a real home. */
const me = userInfo();
const viaHome = `~${me.username}/${relative(me.homedir, '/etc/passwd')}`;

function runUnguarded(command: string, scratch: AttackBox): boolean {
  const result = spawnSync('sh', ['-c', command], {
    cwd: scratch.workdir,
    env: commandEnv(scratch.workdir, { PATH: process.env.PATH }),
    encoding: 'utf8',
  });
  return revealsOutside(`${result.stdout}${result.stderr}`) || outsideChanged(scratch);
}

const attempts: [name: string, command: (b: AttackBox) => string, refusal: RegExp][] = [
  [
    'read /etc/passwd',
    () => 'cat /etc/passwd',
    /absolute path "\/etc\/passwd" is outside the working directory/,
  ],
  ['read an absolute path outside', (b) => `cat ${b.secretPath}`, /absolute path ".*\/outside\/secret\.txt"/],
  ['read ../', () => 'cat ../outside/secret.txt', /parent traversal in "\.\.\/outside\/secret\.txt"/],
  ['read via ~user', () => `cat ${viaHome}`, /home directory expansion "~\w+\/(\.\.\/)*etc\/passwd"/],
  [
    'write outside by redirect',
    (b) => `echo pwned > ${b.outside}/new.txt`,
    /absolute path ".*\/outside\/new\.txt"/,
  ],
  ['a path hidden in a variable', (b) => `FOO=${b.secretPath}; cat "$FOO"`, /outside\/secret\.txt/],
  ['a redirect glued to the path', (b) => `cat<${b.secretPath}`, /outside\/secret\.txt/],
  ['a path glued to an option', (b) => `sort -o${b.outside}/new.txt sub/inner.txt`, /outside\/new\.txt/],
  ['cd .. first', () => 'cd .. && cat outside/secret.txt', /parent traversal in "\.\."/],
  ['a symlink to / made on the spot', (b) => `ln -s / root && cat root${b.secretPath}`, /absolute path "\/"/],
  ['a quoted path after another command', (b) => `echo ok; cat "${b.secretPath}"`, /outside\/secret\.txt/],
];

describe('run_command escapes', () => {
  it.each(attempts)('%s', async (_name, command, refusal) => {
    const box = currentBox();
    expectEscapesUnguarded((scratch) => runUnguarded(command(scratch), scratch));
    expectRefused(await call(run_command, { command: command(box) }, toolContext(box.workdir)), refusal);
  });

  it('no API key reaches a command; HOME and TMPDIR are the workdir', async () => {
    const box = currentBox();
    const env = {
      PATH: process.env.PATH,
      ANTHROPIC_API_KEY: 'sk-ant-secret',
      OPENAI_API_KEY: 'sk-secret',
      TAVILY_API_KEY: 'tvly-secret',
      AWS_SECRET_ACCESS_KEY: 'aws-secret',
      HOME: '/home/someone',
    };
    const out = await call(run_command, { command: 'env' }, toolContext(box.workdir, { env }));
    expect(out.isError).toBe(false);
    expect(out.content).not.toMatch(/secret|KEY/i);
    expect(out.content).toContain(`HOME=${box.workdir}`);
    expect(out.content).toContain(`TMPDIR=${box.workdir}`);
  });

  it('relative paths, URLs and /dev/null pass the guard', async () => {
    const box = currentBox();
    const command =
      'cat sub/inner.txt > /dev/null && echo https://example.com/etc/passwd && cat sub/../sub/inner.txt';
    expect(await call(run_command, { command }, toolContext(box.workdir))).toEqual({
      content: 'https://example.com/etc/passwd\ninner',
      isError: false,
    });
  });
});
