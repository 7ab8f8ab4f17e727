import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { axe, tempHome } from './run-axe.js';

const REPO = join(import.meta.dirname, '..', '..');

describe('axe validate', () => {
  it('passes the agents shipped in agents/', () => {
    const { env } = tempHome();
    const result = axe(['validate', '--agents-dir', 'agents', '--strict'], { cwd: REPO, env });
    expect(result.stderr).toBe('');
    expect(result).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/agent files checked: 0 errors, 0 warnings\n$/),
    });
    const byPath = axe(['validate', 'agents/reviewer.toml', 'agents/commit-message.md'], { cwd: REPO, env });
    expect(byPath).toMatchObject({ code: 0, stdout: '2 agent files checked: 0 errors, 0 warnings\n' });
  });

  it('exits 2 naming file and field; --json lists the findings; --strict fails on warnings', () => {
    const { cwd, env } = tempHome();
    const dir = join(cwd, 'agents');
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'lead.toml'),
      'name = "lead"\nmodel = "anthropic/claude-haiku-4-5"\nsub_agents = ["worker"]\n[sub_agents_config]\nmax_depth = 6\n',
    );
    writeFileSync(join(dir, 'worker.md'), '---\nname: worker\ncolor: red\n---\nWork.\n');

    const text = axe(['validate', '--agents-dir', 'agents'], { cwd, env });
    expect(text.code).toBe(2);
    expect(text.stdout).toContain(
      'error: agents/lead.toml:5:1: sub_agents_config.max_depth: must be <= 5 (got 6); sub_agents_config.max_depth cannot exceed 5\n',
    );
    expect(text.stdout).toMatch(
      /^warning: agents\/worker\.md:3:\d+: color: Claude Code field not supported/m,
    );

    const json = axe(['validate', '--json', '--agents-dir', 'agents', 'worker'], { cwd, env });
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: true,
      checked: 1,
      errors: 0,
      warnings: 1,
      findings: [
        {
          severity: 'info',
          field: 'tools',
          message: expect.stringMatching(/^not given: the read-only tools /),
        },
        { severity: 'warning', field: 'color', line: 3 },
      ],
    });
    const strict = axe(['validate', '--strict', '--agents-dir', 'agents', 'worker'], { cwd, env });
    expect(strict.code).toBe(2);
  });

  it('--json prints the documented shape (schemas/validate-output.schema.json), stdout only', () => {
    const { cwd, env, configDir } = tempHome();
    mkdirSync(join(cwd, 'agents'));
    writeFileSync(join(cwd, 'agents', 'a.toml'), 'name = "a"\nmodel = "a/b"\n\n[params]\ntemprature = 1\n');
    writeFileSync(join(cwd, 'agents', 'b.md'), '---\nname: b\ncolor: red\n---\nB.\n');
    mkdirSync(configDir, { recursive: true });
    writeFileSync(join(configDir, 'config.toml'), '[providers\n');
    const result = axe(['validate', '--json', '--strict', '--agents-dir', 'agents', 'a', 'b', 'ghost'], {
      cwd,
      env,
    });
    expect(result).toMatchObject({ code: 2, stderr: '' });
    const report = JSON.parse(result.stdout);
    const schema = JSON.parse(readFileSync(join(REPO, 'schemas', 'validate-output.schema.json'), 'utf8'));
    const validate = new Ajv2020({ strict: true }).compile(schema);
    expect(validate(report), JSON.stringify(validate.errors)).toBe(true);
    // --strict: every finding counts as an error; a.toml now loads (its unknown key is a warning)
    // and so its unknown provider "a" is found too.
    expect(report).toMatchObject({ ok: false, checked: 2, errors: 5, warnings: 2 });
    for (const finding of report.findings) {
      const order = ['file', 'severity', 'field', 'message', 'line', 'column'];
      expect(Object.keys(finding)).toEqual(order.filter((key) => key in finding));
    }
    expect(report.findings).toContainEqual({
      file: join(cwd, 'agents', 'a.toml'),
      severity: 'warning',
      field: 'params.temprature',
      message: 'unknown field, ignored (did you mean "temperature"?)',
      line: 5,
      column: 1,
    });
    expect(report.findings).toContainEqual({
      file: 'ghost',
      severity: 'error',
      message: 'agent config not found: ghost',
    });
  });

  it("counts config.toml's warnings: an unknown key is a warning, an error under --strict", () => {
    const { cwd, env, configDir } = tempHome();
    mkdirSync(join(configDir, 'agents'), { recursive: true });
    writeFileSync(join(configDir, 'agents', 'a.toml'), 'name = "a"\nmodel = "anthropic/x"\n');
    writeFileSync(join(configDir, 'config.toml'), '[providers.anthropic]\napi_keyy = "x"\n');
    const plain = axe(['validate', 'a'], { cwd, env });
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(
      /^warning: .*config\.toml:2:1: providers\.anthropic\.api_keyy: unknown field, ignored \(did you mean "api_key"\?\)$/m,
    );
    expect(plain.stdout).toMatch(/0 errors, 1 warning$/m);
    expect(axe(['validate', 'a', '--strict'], { cwd, env }).code).toBe(2);
  });

  it('reports a broken config.toml as a finding, without a stack trace', () => {
    const { cwd, env, configDir } = tempHome();
    mkdirSync(configDir, { recursive: true });
    writeFileSync(join(configDir, 'config.toml'), '[providers\n');
    const result = axe(['validate'], { cwd, env });
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(/^error: .*config\.toml:1:\d+: /m);
    expect(result.stdout + result.stderr).not.toMatch(/\n\s+at /);
  });
});
