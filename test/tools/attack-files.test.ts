import {
  constants,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../internal/provider/types.js';
import { BUILTIN_TOOLS } from '../../internal/tools/index.js';
import { openInSandbox, resolveInSandbox, writeInSandbox } from '../../internal/tools/sandbox.js';
import type { Tool } from '../../internal/tools/types.js';
import {
  type AttackBox,
  expectEscapesUnguarded,
  expectRefused,
  outsideChanged,
  revealsOutside,
  SECRET,
  useAttackBox,
} from './attack-box.js';
import { call, toolContext } from './helpers.js';

/**
 * Escape attempts against the file tools' sandbox. Each one is first run unguarded (plain fs
 * calls on the same path) to prove it would escape; through the tool it must be refused, with
 * nothing outside the workdir read or changed.
 */
const currentBox = useAttackBox();

const { list_directory, read_file, write_file, edit_file } = BUILTIN_TOOLS;

/** What the tool would do with no sandbox at all; true when that reached outside the workdir. */
function unguarded(tool: Tool, args: JsonObject, scratch: AttackBox): boolean {
  const path = resolve(scratch.workdir, String(args.path));
  switch (tool) {
    case read_file:
      return revealsOutside(readFileSync(path, 'utf8'));
    case list_directory:
      return readdirSync(path).some((name) => name === 'secret.txt' || name === 'outside');
    case write_file:
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, String(args.content));
      return outsideChanged(scratch);
    default: {
      const text = readFileSync(path, 'utf8');
      writeFileSync(path, text.replace(String(args.old_string), String(args.new_string)));
      return outsideChanged(scratch);
    }
  }
}

type Attempt = [name: string, tool: Tool, args: (b: AttackBox) => JsonObject, refusal: RegExp];
const attempts: Attempt[] = [
  ['read ../', read_file, () => ({ path: '../outside/secret.txt' }), /"\.\.\/outside\/secret\.txt" escapes/],
  [
    'read an absolute path outside',
    read_file,
    (b) => ({ path: b.secretPath }),
    /absolute paths are not allowed/,
  ],
  ['read /etc/passwd', read_file, () => ({ path: '/etc/passwd' }), /"\/etc\/passwd": absolute paths/],
  ['read a/../../', read_file, () => ({ path: 'sub/../../outside/secret.txt' }), /escapes the workdir/],
  [
    'read through a symlinked dir',
    read_file,
    () => ({ path: 'link/secret.txt' }),
    /"link\/secret\.txt" leaves/,
  ],
  ['read a symlinked leaf', read_file, () => ({ path: 'leak.txt' }), /"leak\.txt" leaves the workdir/],
  ['list ..', list_directory, () => ({ path: '..' }), /"\.\." escapes the workdir/],
  ['list a symlinked dir', list_directory, () => ({ path: 'link' }), /"link" leaves the workdir/],
  ['write ../', write_file, () => ({ path: '../outside/new.txt', content: 'x' }), /escapes the workdir/],
  ['write through a symlinked dir', write_file, () => ({ path: 'link/new.txt', content: 'x' }), /leaves/],
  [
    'write a symlinked leaf',
    write_file,
    () => ({ path: 'leak.txt', content: 'pwned' }),
    /"leak\.txt" leaves/,
  ],
  ['write a dangling symlink', write_file, () => ({ path: 'dangling.txt', content: 'x' }), /"dangling\.txt"/],
  [
    'edit a symlinked leaf',
    edit_file,
    () => ({ path: 'leak.txt', old_string: 'TOP', new_string: 'NOT' }),
    /"leak\.txt" leaves the workdir/,
  ],
  [
    'edit ../',
    edit_file,
    () => ({ path: '../outside/secret.txt', old_string: 'TOP', new_string: 'NOT' }),
    /escapes the workdir/,
  ],
];

describe('file tool escapes', () => {
  it.each(attempts)('%s', async (_name, tool, args, refusal) => {
    const box = currentBox();
    expectEscapesUnguarded((scratch) => unguarded(tool, args(scratch), scratch));
    expectRefused(await call(tool, args(box), toolContext(box.workdir)), refusal);
  });
});

describe('links swapped in between check and use', () => {
  it('a directory swapped for a symlink is refused (read)', async () => {
    const box = currentBox();
    const checked = await resolveInSandbox(box.workdir, 'sub/inner.txt');
    mkdirSync(join(box.outside, 'sub'));
    writeFileSync(join(box.outside, 'sub', 'inner.txt'), SECRET);
    renameSync(join(box.workdir, 'sub'), join(box.workdir, 'sub-old'));
    symlinkSync(join(box.outside, 'sub'), join(box.workdir, 'sub'));
    expect(readFileSync(checked, 'utf8')).toBe(SECRET); // unguarded, the checked path now leads outside
    await expect(openInSandbox(box.workdir, checked, constants.O_RDONLY, 'sub/inner.txt')).rejects.toThrow(
      /"sub\/inner\.txt" changed between check and use/,
    );
  });

  it('a directory swapped for a symlink is refused (create): no file appears outside, not even briefly', async () => {
    const box = currentBox();
    const checked = await resolveInSandbox(box.workdir, 'sub/new.txt');
    renameSync(join(box.workdir, 'sub'), join(box.workdir, 'sub-old'));
    symlinkSync(box.outside, join(box.workdir, 'sub'));
    // A file created and removed again would still change the directory's modification time.
    const outsideMtime = statSync(box.outside).mtimeMs;
    await expect(writeInSandbox(box.workdir, checked, Buffer.from('x'), 'sub/new.txt')).rejects.toThrow(
      /changed between check|is a symlink/,
    );
    expect(statSync(box.outside).mtimeMs).toBe(outsideMtime);
  });

  it('a leaf swapped for a symlink is refused (write): the link target keeps its content', async () => {
    const box = currentBox();
    const checked = await resolveInSandbox(box.workdir, 'sub/inner.txt');
    renameSync(join(box.workdir, 'sub', 'inner.txt'), join(box.workdir, 'sub', 'old.txt'));
    symlinkSync(box.secretPath, join(box.workdir, 'sub', 'inner.txt'));
    await expect(writeInSandbox(box.workdir, checked, Buffer.from('x'), 'sub/inner.txt')).rejects.toThrow(
      /"sub\/inner\.txt" is a symlink/,
    );
    expect(readFileSync(box.secretPath, 'utf8')).toBe(SECRET);
  });

  it('a leaf swapped for a symlink is refused', async () => {
    const box = currentBox();
    const checked = await resolveInSandbox(box.workdir, 'sub/inner.txt');
    renameSync(join(box.workdir, 'sub', 'inner.txt'), join(box.workdir, 'sub', 'old.txt'));
    symlinkSync(box.secretPath, join(box.workdir, 'sub', 'inner.txt'));
    expect(readFileSync(checked, 'utf8')).toBe(SECRET);
    await expect(openInSandbox(box.workdir, checked, constants.O_RDWR, 'sub/inner.txt')).rejects.toThrow(
      /"sub\/inner\.txt" is a symlink/,
    );
  });
});

describe('what the sandbox still allows, and its plain rules', () => {
  it('symlinks that stay inside the workdir work', async () => {
    const box = currentBox();
    symlinkSync(join(box.workdir, 'sub'), join(box.workdir, 'alias'));
    const out = await call(read_file, { path: 'alias/inner.txt' }, toolContext(box.workdir));
    expect(out).toEqual({ content: '1: inner', isError: false });
  });

  it('absolute paths are refused even inside the workdir (Go axe rule); so is a NUL byte', async () => {
    const box = currentBox();
    const inside = join(box.workdir, 'sub', 'inner.txt');
    expectRefused(await call(read_file, { path: inside }, toolContext(box.workdir)), /absolute paths/);
    const nul = await call(read_file, { path: 'sub/inner.txt\0../../x' }, toolContext(box.workdir));
    expectRefused(nul, /contains a NUL byte/);
  });
});
