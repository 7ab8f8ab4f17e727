import { describe, expect, it } from 'vitest';
import { docCommands, shBlocks } from './doc-commands.js';

/** The reader of the docs' command blocks, which the docs-commands e2e test relies on. */
describe('docCommands', () => {
  it('reads words as a shell does: quotes, escapes, continuations, comments, lists and pipes', () => {
    const page = [
      '# Title',
      '',
      '```sh',
      'git diff | npx axe run reviewer -p "Focus on \\"SQL\\"" --json > out.json  # a comment',
      "export KEY=… && AXE_DEBUG=1 axe run 'my agent' \\",
      '  --replay a.jsonl < in.diff 2>&1; echo done',
      'npm test',
      '```',
    ].join('\n');
    expect(docCommands('p.md', page)).toEqual([
      { where: 'p.md:4', args: ['run', 'reviewer', '-p', 'Focus on "SQL"', '--json'], env: {}, run: true },
      {
        where: 'p.md:5',
        args: ['run', 'my agent', '--replay', 'a.jsonl'],
        env: { AXE_DEBUG: '1' },
        stdinFile: 'in.diff',
        run: true,
      },
    ]);
  });

  it('a block after <!-- not-run --> (blank lines between allowed) is not run; other blocks are', () => {
    const page = [
      '<!-- not-run -->',
      '',
      '```sh',
      'axe gc reviewer',
      '```',
      '',
      '```sh',
      'axe validate',
      '```',
    ];
    expect(shBlocks(page.join('\n')).map((block) => [block.line, block.run])).toEqual([
      [4, false],
      [8, true],
    ]);
    expect(docCommands('p.md', page.join('\n')).map((command) => command.run)).toEqual([false, true]);
  });

  it('only ```sh blocks count, and what it cannot read is an error, never a command let through', () => {
    expect(docCommands('p.md', '```text\naxe frobnicate\n```\n\n```toml\nx = 1\n```\n')).toEqual([]);
    expect(() => docCommands('p.md', '```sh\naxe run x -p "$(cat notes)"\n```\n')).toThrow(/substitution/);
    expect(() => docCommands('p.md', '```sh\naxe run x -p `cat notes`\n```\n')).toThrow(/substitution/);
    expect(() => docCommands('p.md', "```sh\naxe run x -p 'open\n```\n")).toThrow(/unclosed/);
    expect(() => docCommands('p.md', '```sh\naxe run x <\n```\n')).toThrow(/without a file/);
    expect(() => docCommands('p.md', '```sh\naxe run x\n')).toThrow(/never ends/);
  });
});
