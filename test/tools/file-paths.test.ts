import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JsonObject } from '../../internal/provider/types.js';
import { BUILTIN_TOOLS } from '../../internal/tools/index.js';
import { makeParents, resolveToWrite } from '../../internal/tools/sandbox.js';
import type { Tool } from '../../internal/tools/types.js';
import { call, makeSandbox, toolContext } from './helpers.js';

// Paths that name a directory, or go through a file, given to the file tools: each is refused
// with one line that names only what the model gave, and nothing on disk changes.
const { read_file, write_file, edit_file } = BUILTIN_TOOLS;
let box: ReturnType<typeof makeSandbox>;
beforeEach(() => {
  box = makeSandbox();
  writeFileSync(join(box.workdir, 'plain'), 'hello\n');
  mkdirSync(join(box.workdir, 'dir'));
});
afterEach(() => box.cleanup());

async function refusal(tool: Tool, args: JsonObject): Promise<string> {
  const out = await call(tool, args, toolContext(box.workdir));
  expect(out.isError).toBe(true);
  expect(out.content).not.toContain(box.root);
  return out.content;
}

/** The workdir's entries, `name:file` or `name:dir`, to show nothing was created or replaced. */
function entries(): string[] {
  return readdirSync(box.workdir)
    .sort()
    .map((name) => `${name}:${statSync(join(box.workdir, name)).isFile() ? 'file' : 'dir'}`);
}

describe('write_file refuses a path that names a directory', () => {
  it('the workdir itself, however it is spelled', async () => {
    for (const path of ['.', './', 'dir/..']) {
      expect(await refusal(write_file, { path, content: 'x' })).toBe(
        `path "${path}" is the workdir itself, not a file`,
      );
    }
    expect(entries()).toEqual(['dir:dir', 'plain:file']);
  });

  it('a missing path ending in "/" (or "/."), instead of creating a file by that name', async () => {
    expect(await refusal(write_file, { path: 'newdir/', content: 'x' })).toBe(
      'path "newdir/" names a directory, not a file',
    );
    expect(await refusal(write_file, { path: 'new/.', content: 'x' })).toBe(
      'path "new/." names a directory, not a file',
    );
    expect(await refusal(write_file, { path: 'a/b/', content: 'x' })).toBe(
      'path "a/b/" names a directory, not a file',
    );
    expect(entries()).toEqual(['dir:dir', 'plain:file']);
  });

  it('an existing directory ending in "/"', async () => {
    expect(await refusal(write_file, { path: 'dir/', content: 'x' })).toBe(
      'path "dir/" is a directory, not a file',
    );
    expect(readdirSync(join(box.workdir, 'dir'))).toEqual([]);
  });

  it('an existing file with "/" after it, instead of overwriting the file', async () => {
    expect(await refusal(write_file, { path: 'plain/', content: 'x' })).toBe(
      'path "plain/": "plain" is a file, not a directory',
    );
    expect(readFileSync(join(box.workdir, 'plain'), 'utf8')).toBe('hello\n');
  });
});

describe('write_file refuses a path that goes through a file', () => {
  it("names the file, relative to the workdir, not mkdir's EEXIST or ENOTDIR", async () => {
    expect(await refusal(write_file, { path: 'plain/x', content: 'x' })).toBe(
      'path "plain/x": "plain" is a file, not a directory',
    );
    expect(await refusal(write_file, { path: './plain/x/y', content: 'x' })).toBe(
      'path "./plain/x/y": "plain" is a file, not a directory',
    );
    writeFileSync(join(box.workdir, 'dir/inner'), 'x');
    expect(await refusal(write_file, { path: 'dir/inner/z', content: 'x' })).toBe(
      'path "dir/inner/z": "dir/inner" is a file, not a directory',
    );
    expect(readFileSync(join(box.workdir, 'plain'), 'utf8')).toBe('hello\n');
  });

  it('names a symlink to a file by the name the model gave', async () => {
    symlinkSync('plain', join(box.workdir, 'link'));
    expect(await refusal(write_file, { path: 'link/x', content: 'x' })).toBe(
      'path "link/x": "link" is a file, not a directory',
    );
  });

  it('a directory replaced by a file after the check is one line, with no absolute path', async () => {
    mkdirSync(join(box.workdir, 'sub'));
    const checked = await resolveToWrite(box.workdir, 'sub/new/x.txt');
    rmSync(join(box.workdir, 'sub'), { recursive: true });
    writeFileSync(join(box.workdir, 'sub'), 'x');
    const error = await makeParents(checked, 'sub/new/x.txt').catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).toBe('path "sub/new/x.txt": a part of the path is not a directory');
  });

  it('still creates missing parent directories for an ordinary path', async () => {
    const out = await call(write_file, { path: 'dir/a/b.txt', content: 'hi' }, toolContext(box.workdir));
    expect(out).toEqual({ content: 'wrote 2 bytes to dir/a/b.txt', isError: false });
    expect(readFileSync(join(box.workdir, 'dir/a/b.txt'), 'utf8')).toBe('hi');
  });
});

describe('read_file and edit_file refuse a file named with "/" after it', () => {
  it('read_file: "plain/" and "plain/." are not the file "plain"', async () => {
    expect(await refusal(read_file, { path: 'plain/' })).toBe(
      'path "plain/": "plain" is a file, not a directory',
    );
    expect(await refusal(read_file, { path: 'plain/.' })).toBe(
      'path "plain/.": "plain" is a file, not a directory',
    );
    const ok = await call(read_file, { path: 'plain' }, toolContext(box.workdir));
    expect(ok).toEqual({ content: '1: hello', isError: false });
  });

  it('read_file: a directory with "/" after it is still the directory message', async () => {
    expect(await refusal(read_file, { path: 'dir/' })).toBe(
      'path "dir/" is a directory, not a file (use list_directory)',
    );
  });

  it('edit_file: "plain/" is refused and the file is left alone', async () => {
    const args = { path: 'plain/', old_string: 'hello', new_string: 'bye' };
    expect(await refusal(edit_file, args)).toBe('path "plain/": "plain" is a file, not a directory');
    expect(readFileSync(join(box.workdir, 'plain'), 'utf8')).toBe('hello\n');
  });
});
