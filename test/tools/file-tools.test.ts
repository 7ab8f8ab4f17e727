import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BUILTIN_TOOLS } from '../../internal/tools/index.js';
import { call, makeSandbox, toolContext } from './helpers.js';

const { list_directory, read_file, write_file, edit_file } = BUILTIN_TOOLS;
let box: ReturnType<typeof makeSandbox>;
beforeEach(() => {
  box = makeSandbox();
});
afterEach(() => box.cleanup());

describe('list_directory', () => {
  it('lists one entry per line, directories suffixed with /', async () => {
    mkdirSync(join(box.workdir, 'src'));
    writeFileSync(join(box.workdir, 'b.txt'), 'x');
    writeFileSync(join(box.workdir, 'a.txt'), 'x');
    const out = await call(list_directory, { path: '.' }, toolContext(box.workdir));
    expect(out).toEqual({ content: 'a.txt\nb.txt\nsrc/', isError: false });
  });

  it('refuses a file and a missing path, naming it', async () => {
    writeFileSync(join(box.workdir, 'f'), 'x');
    expect((await call(list_directory, { path: 'f' }, toolContext(box.workdir))).content).toContain(
      '"f" is not a directory',
    );
    const missing = await call(list_directory, { path: 'nope' }, toolContext(box.workdir));
    expect(missing).toEqual({ content: 'path "nope" does not exist', isError: true });
  });
});

describe('read_file', () => {
  beforeEach(() => writeFileSync(join(box.workdir, 'f.txt'), 'one\ntwo\nthree\nfour\n'));

  it('numbers lines from 1', async () => {
    const out = await call(read_file, { path: 'f.txt' }, toolContext(box.workdir));
    expect(out).toEqual({ content: '1: one\n2: two\n3: three\n4: four', isError: false });
  });

  it('pages with offset and limit given as integers or numeric strings', async () => {
    const ctx = toolContext(box.workdir);
    expect((await call(read_file, { path: 'f.txt', offset: 2, limit: 2 }, ctx)).content).toBe(
      '2: two\n3: three',
    );
    expect((await call(read_file, { path: 'f.txt', offset: '3', limit: '1' }, ctx)).content).toBe('3: three');
  });

  it('says how long the file is when offset is past the end', async () => {
    const out = await call(read_file, { path: 'f.txt', offset: 9 }, toolContext(box.workdir));
    expect(out).toEqual({ content: 'offset 9 exceeds file length of 4 lines', isError: true });
  });

  it('refuses bad arguments, directories and binary files', async () => {
    const ctx = toolContext(box.workdir);
    expect((await call(read_file, { path: 'f.txt', offset: 'two' }, ctx)).content).toBe(
      '"offset" must be an integer, got "two"',
    );
    expect((await call(read_file, { path: 'f.txt', limit: 0 }, ctx)).content).toBe(
      '"limit" must be >= 1, got 0',
    );
    expect((await call(read_file, {}, ctx)).content).toBe(
      '"path" is required and must be a non-empty string',
    );
    mkdirSync(join(box.workdir, 'd'));
    expect((await call(read_file, { path: 'd' }, ctx)).content).toContain('"d" is a directory');
    writeFileSync(join(box.workdir, 'bin'), Buffer.from([1, 0, 2]));
    expect((await call(read_file, { path: 'bin' }, ctx)).content).toContain('"bin" is a binary file');
  });
});

describe('write_file', () => {
  it('creates parent directories and reports bytes written', async () => {
    const out = await call(write_file, { path: 'a/b/c.txt', content: 'héllo' }, toolContext(box.workdir));
    expect(out).toEqual({ content: 'wrote 6 bytes to a/b/c.txt', isError: false });
    expect(readFileSync(join(box.workdir, 'a/b/c.txt'), 'utf8')).toBe('héllo');
  });

  it('overwrites (and truncates) an existing file', async () => {
    writeFileSync(join(box.workdir, 'f'), 'a long old content');
    await call(write_file, { path: 'f', content: 'new' }, toolContext(box.workdir));
    expect(readFileSync(join(box.workdir, 'f'), 'utf8')).toBe('new');
  });
});

describe('edit_file', () => {
  beforeEach(() => writeFileSync(join(box.workdir, 'f'), 'let a = 1;\nlet b = 1;\n'));

  it('replaces a unique match', async () => {
    const out = await call(
      edit_file,
      { path: 'f', old_string: 'a = 1', new_string: 'a = 2' },
      toolContext(box.workdir),
    );
    expect(out).toEqual({ content: 'replaced 1 occurrence in f', isError: false });
    expect(readFileSync(join(box.workdir, 'f'), 'utf8')).toBe('let a = 2;\nlet b = 1;\n');
  });

  it('reports missing and ambiguous matches with their count, leaving the file alone', async () => {
    const ctx = toolContext(box.workdir);
    const missing = await call(edit_file, { path: 'f', old_string: 'zzz', new_string: '' }, ctx);
    expect(missing).toEqual({ content: 'old_string not found in "f" (0 matches)', isError: true });
    const ambiguous = await call(edit_file, { path: 'f', old_string: '= 1', new_string: '= 3' }, ctx);
    expect(ambiguous.isError).toBe(true);
    expect(ambiguous.content).toContain('old_string matches 2 times in "f"');
    expect(readFileSync(join(box.workdir, 'f'), 'utf8')).toBe('let a = 1;\nlet b = 1;\n');
  });

  it('replaces all with replace_all as a boolean or "true"', async () => {
    const ctx = toolContext(box.workdir);
    const out = await call(
      edit_file,
      { path: 'f', old_string: '= 1', new_string: '= 3', replace_all: 'true' },
      ctx,
    );
    expect(out.content).toBe('replaced 2 occurrences in f');
    await call(edit_file, { path: 'f', old_string: '= 3', new_string: '= 4', replace_all: true }, ctx);
    expect(readFileSync(join(box.workdir, 'f'), 'utf8')).toBe('let a = 4;\nlet b = 4;\n');
  });

  it('refuses to replace a file another writer changed after it was read, keeping that change', async () => {
    const file = join(box.workdir, 'f');
    const fs = process.getBuiltinModule('node:fs/promises');
    const open = fs.open;
    // Another writer (a sibling agent, an editor) writes the file while the edit writes its temp file.
    const spy = vi.spyOn(fs, 'open').mockImplementation(async (...args: Parameters<typeof open>) => {
      if (String(args[0]).endsWith('.tmp')) writeFileSync(file, 'let a = 1;\nlet b = 1;\nlet c = 3;\n');
      return open(...args);
    });
    try {
      const out = await call(
        edit_file,
        { path: 'f', old_string: 'a = 1', new_string: 'a = 2' },
        toolContext(box.workdir),
      );
      expect(out).toEqual({
        content: '"f" changed since it was read: not edited (read it again)',
        isError: true,
      });
    } finally {
      spy.mockRestore();
    }
    expect(readFileSync(file, 'utf8')).toBe('let a = 1;\nlet b = 1;\nlet c = 3;\n');
    expect(readdirSync(box.workdir)).toEqual(['f']);
  });

  it('refuses a file that is not UTF-8, leaving its bytes alone, and keeps a byte order mark', async () => {
    const ctx = toolContext(box.workdir);
    const latin1 = Buffer.from('caf\xe9\nversion = 1\n', 'latin1');
    writeFileSync(join(box.workdir, 'latin1.txt'), latin1);
    const refused = await call(edit_file, { path: 'latin1.txt', old_string: '= 1', new_string: '= 2' }, ctx);
    expect(refused).toEqual({
      content: 'path "latin1.txt" is not UTF-8 text: not edited (edit_file changes text files only)',
      isError: true,
    });
    expect(readFileSync(join(box.workdir, 'latin1.txt'))).toEqual(latin1);
    writeFileSync(join(box.workdir, 'bom.txt'), '\uFEFFversion = 1\n');
    await call(edit_file, { path: 'bom.txt', old_string: '= 1', new_string: '= 2' }, ctx);
    expect(readFileSync(join(box.workdir, 'bom.txt'))).toEqual(Buffer.from('\uFEFFversion = 2\n', 'utf8'));
  });
});

describe('files over 10 MiB', () => {
  it('read_file and edit_file refuse them whole, and the file is left alone', async () => {
    const ctx = toolContext(box.workdir);
    const big = join(box.workdir, 'big.log');
    // Sparse: 10 MiB and one byte of zeros without writing them.
    writeFileSync(big, 'x');
    truncateSync(big, 10 * 1024 * 1024 + 1);
    const limit = 'path "big.log" is 10485761 bytes, larger than the 10485760-byte limit';
    expect(await call(read_file, { path: 'big.log' }, ctx)).toEqual({ content: limit, isError: true });
    expect(await call(edit_file, { path: 'big.log', old_string: 'x', new_string: 'y' }, ctx)).toEqual({
      content: limit,
      isError: true,
    });
    expect(readFileSync(big).subarray(0, 1).toString()).toBe('x');
  });
});

describe('createToolset (built-ins only)', () => {
  it('offers the listed built-ins minus disallowed ones, in order, and warns about unknown names', async () => {
    const { createToolset } = await import('../../internal/tools/index.js');
    const reports: unknown[] = [];
    const spec = {
      tools: ['run_command', 'read_file', 'read_file', 'reed_file', 'write_file'],
      disallowedTools: ['run_command'],
      mcpServers: [],
    } as unknown as import('../../internal/agent/spec.js').AgentSpec;
    const toolset = await createToolset({
      spec,
      context: toolContext(box.workdir),
      report: (e) => reports.push(e),
    });
    expect(toolset.tools.map((t) => t.spec.name)).toEqual(['read_file', 'write_file']);
    expect(reports).toEqual([
      {
        type: 'warning',
        message: 'tool "reed_file" is neither a built-in tool nor offered by an MCP server',
      },
    ]);
    await toolset.close();
  });

  it('declares typed parameters: integers as integers, booleans as booleans', () => {
    expect(read_file.spec.parameters).toMatchObject({
      type: 'object',
      properties: { offset: { type: 'integer' }, limit: { type: 'integer' } },
      required: ['path'],
    });
    expect(edit_file.spec.parameters).toMatchObject({ properties: { replace_all: { type: 'boolean' } } });
  });
});

describe('special files', () => {
  it('refuses a FIFO instead of hanging on it', async () => {
    execFileSync('mkfifo', [join(box.workdir, 'pipe')]);
    const ctx = toolContext(box.workdir);
    expect(await call(read_file, { path: 'pipe' }, ctx)).toEqual({
      content: 'path "pipe" is not a regular file',
      isError: true,
    });
    expect(await call(write_file, { path: 'pipe', content: 'x' }, ctx)).toEqual({
      content: 'path "pipe" is not a regular file',
      isError: true,
    });
  });
});
