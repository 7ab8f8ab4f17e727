import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../../internal/errors.js';
import { compileGlob } from '../../internal/fs/glob.js';
import { buildSystemPrompt, readContextFiles, readSkill } from '../../internal/runner/prompt.js';

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'axe-prompt-')));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

function write(relative: string, content: string | Buffer): void {
  const file = path.join(root, relative);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

describe('buildSystemPrompt', () => {
  it('joins system prompt, skill and context files in the Go axe layout', () => {
    const prompt = buildSystemPrompt('You review code.', 'Be terse.', [
      { path: 'a/main.go', content: 'package main' },
      { path: 'README', content: 'hi' },
    ]);
    expect(prompt).toBe(
      'You review code.\n\n---\n\n## Skill\n\nBe terse.\n\n---\n\n## Context Files\n\n' +
        '### a/main.go\n```go\npackage main\n```\n\n### README\n```\nhi\n```',
    );
  });

  it('leaves out empty sections', () => {
    expect(buildSystemPrompt('Only this.', '', [])).toBe('Only this.');
    expect(buildSystemPrompt('', 'Skill.', [])).toBe('\n\n---\n\n## Skill\n\nSkill.');
  });
});

describe('compileGlob', () => {
  it('matches like filepath.Match per segment, with ** for any depth', () => {
    const cases: [string, string, boolean][] = [
      ['*.go', 'main.go', true],
      ['*.go', 'cmd/main.go', false],
      ['**/*.go', 'main.go', true],
      ['**/*.go', 'a/b/c.go', true],
      ['a/**/b.go', 'a/b.go', true],
      ['a/**/b.go', 'a/x/y/b.go', true],
      ['a/**', 'a/x/y', true],
      ['file?.txt', 'file1.txt', true],
      ['file[0-9].txt', 'filex.txt', false],
      ['file[^0-9].txt', 'filex.txt', true],
      ['src/*.ts', 'src/a.ts', true],
    ];
    for (const [pattern, file, expected] of cases) {
      expect(`${pattern} ~ ${file}: ${compileGlob(pattern)(file)}`).toBe(`${pattern} ~ ${file}: ${expected}`);
    }
  });
});

describe('readContextFiles', () => {
  const work = path.join(root, 'work');
  write('work/b.md', 'bee');
  write('work/a.md', 'ay');
  write('work/docs/deep/c.md', 'see');
  write('work/docs/notes.txt', 'notes');
  write('work/bin.md', Buffer.from([0x68, 0x00, 0x69]));
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'axe-outside-'));
  fs.writeFileSync(path.join(outside, 'secret.md'), 'secret');
  fs.symlinkSync(path.join(outside, 'secret.md'), path.join(work, 'leak.md'));
  fs.symlinkSync(path.join(work, 'a.md'), path.join(work, 'alias.md'));
  afterAll(() => fs.rmSync(outside, { recursive: true, force: true }));

  it('globs relative to the workdir, sorted, deduplicated, binary and escaping symlinks skipped', async () => {
    const files = await readContextFiles(['**/*.md', '*.md', 'docs/*.txt'], work, 'agent.toml');
    expect(files).toEqual([
      { path: 'a.md', content: 'ay' },
      { path: 'alias.md', content: 'ay' },
      { path: 'b.md', content: 'bee' },
      { path: 'docs/deep/c.md', content: 'see' },
      { path: 'docs/notes.txt', content: 'notes' },
    ]);
  });

  it('takes a literal path and ignores one that does not exist', async () => {
    expect(await readContextFiles(['docs/notes.txt', 'missing.txt'], work, 'agent.toml')).toEqual([
      { path: 'docs/notes.txt', content: 'notes' },
    ]);
  });

  it('rejects an invalid pattern with a ConfigError naming the file', async () => {
    await expect(readContextFiles(['[abc'], work, '/x/agent.toml')).rejects.toThrow(
      new ConfigError('/x/agent.toml: files: invalid glob pattern "[abc": unclosed "["'),
    );
  });
});

describe('readSkill', () => {
  write('config/skills/review/SKILL.md', 'by name');
  write('config/custom/skill.md', 'relative');

  it('finds a skill by bare name, by path relative to the config dir, and by absolute path', async () => {
    const configDir = path.join(root, 'config');
    expect(await readSkill('review', configDir, 'a.toml')).toBe('by name');
    expect(await readSkill('custom/skill.md', configDir, 'a.toml')).toBe('relative');
    expect(await readSkill(path.join(configDir, 'custom/skill.md'), '/elsewhere', 'a.toml')).toBe('relative');
  });

  it('names a missing skill in a ConfigError', async () => {
    const configDir = path.join(root, 'config');
    const error = await readSkill('nope', configDir, '/x/a.toml').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      `/x/a.toml: skill "nope" not found: ${path.join(configDir, 'skills/nope/SKILL.md')}`,
    );
  });
});
