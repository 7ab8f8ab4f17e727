import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { axe, tempHome } from './run-axe.js';

const { version } = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', '..', 'package.json'), 'utf8'),
) as {
  version: string;
};

describe('axe version / axe config', () => {
  it('prints the version', () => {
    const { cwd, env } = tempHome();
    for (const args of [['version'], ['--version']]) {
      expect(axe(args, { cwd, env })).toEqual({ code: 0, stdout: `axe version ${version}\n`, stderr: '' });
    }
  });

  it('prints the config path from XDG_CONFIG_HOME, else ~/.config', () => {
    const { cwd, env, home, configDir } = tempHome();
    expect(axe(['config', 'path'], { cwd, env })).toEqual({ code: 0, stdout: `${configDir}\n`, stderr: '' });
    const { XDG_CONFIG_HOME: _, ...withoutXdg } = env;
    expect(axe(['config', 'path'], { cwd, env: withoutXdg }).stdout).toBe(
      `${join(home, '.config', 'axe')}\n`,
    );
  });

  it('config init creates agents/, the sample skill and a private config.toml, idempotently', () => {
    const { cwd, env, configDir } = tempHome();
    expect(axe(['config', 'init'], { cwd, env })).toEqual({ code: 0, stdout: `${configDir}\n`, stderr: '' });
    expect(statSync(join(configDir, 'agents')).isDirectory()).toBe(true);
    // Go axe's sample skill: its title and its three sections, in order.
    const skill = readFileSync(join(configDir, 'skills', 'sample', 'SKILL.md'), 'utf8');
    expect(skill.split('\n').filter((line) => line.startsWith('#'))).toEqual([
      '# Sample Skill',
      '## Purpose',
      '## Instructions',
      '## Output Format',
    ]);
    const configToml = join(configDir, 'config.toml');
    expect(statSync(configToml).mode & 0o777).toBe(0o600);
    expect(readFileSync(configToml, 'utf8')).toMatch(/# \[providers\.anthropic\]/);

    writeFileSync(configToml, '[providers.openai]\napi_key = "mine"\n');
    expect(axe(['config', 'init'], { cwd, env }).code).toBe(0);
    expect(readFileSync(configToml, 'utf8')).toBe('[providers.openai]\napi_key = "mine"\n');
  });

  it('usage errors exit 2 with one line on stderr and nothing on stdout', () => {
    const { cwd, env } = tempHome();
    for (const args of [
      ['bogus'],
      ['config', 'nope'],
      ['agents', 'frob'],
      ['validate', '--bogus'],
      ['agents', 'show'],
    ]) {
      const result = axe(args, { cwd, env });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^axe: [^\n]+\n$/);
      // An unknown option names the help of the command it was given to.
      if (args[1] === '--bogus') expect(result.stderr).toContain('(see axe validate --help)');
    }
  });

  it('every command has --help: its name, a line saying what it does, and its docs page', () => {
    const { cwd, env } = tempHome();
    for (const command of ['version', 'config', 'agents', 'validate', 'run', 'runs', 'gc', 'models']) {
      const result = axe([command, '--help'], { cwd, env });
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(new RegExp(`^axe ${command}\\n\\S[^\\n]+\\n`));
      expect(result.stdout).toContain(`$ axe ${command}`);
      expect(result.stdout).toMatch(/\nDocs:\n {2}\/\S+\.md\n$/);
    }
    const top = axe(['--help'], { cwd, env });
    expect(top.stdout).toMatch(/^axe\nA declarative LLM agent runner/);
    expect(top.stdout).toMatch(/\nDocs:\n {2}\/\S+README\.md\n$/);
  });

  it('a command group alone lists its actions (exit 0)', () => {
    const { cwd, env } = tempHome();
    for (const [group, actions] of [
      ['agents', 'list | show <agent> | init <agent> | edit <agent>'],
      ['runs', 'list | show <run> | rm <run>'],
      ['config', '`axe config path` | `axe config init`'],
    ] as const) {
      const result = axe([group], { cwd, env });
      expect(result, group).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toContain(actions);
      expect(result.stdout).toContain(`$ axe ${group} <action>`);
    }
  });

  it('axe run --help teaches: examples, environment variables, exit codes', () => {
    const { cwd, env } = tempHome();
    const result = axe(['run', '--help'], { cwd, env });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Examples:\n  $ axe run reviewer < changes.diff\n');
    expect(result.stdout).toContain('  $ axe run -m openai/gpt-5-mini -p "name three prime numbers"');
    expect(result.stdout).toMatch(/\nEnvironment:\n {2}<PROVIDER>_API_KEY /);
    expect(result.stdout).toMatch(/\nExit codes:\n {2}0 .*\n {2}1 .*\n {2}2 .*\n {2}3 .*\n {2}4 /);
  });
});
