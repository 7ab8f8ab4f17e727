import { readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { repoRoot, sourceFiles } from './source-files.js';

/**
 * What only cmd/ may touch: the arguments, the exit, and the standard streams. internal/ is the
 * library: it is handed its arguments, returns typed errors that carry their exit code, and writes
 * through the sinks cmd/ gives it.
 */
const CMD_ONLY = new Set(['process.argv', 'process.exit', 'process.stdout', 'process.stderr', 'console']);

/** Each use of a CMD_ONLY name in `source`, as `line: name`; comments and strings do not count. */
function cmdOnlyUses(fileName: string, source: string): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    let hit: string | undefined;
    if (ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.expression)) {
      const name = `${node.expression.text}.${node.name.text}`;
      if (CMD_ONLY.has(name)) hit = name;
    } else if (ts.isIdentifier(node) && CMD_ONLY.has(node.text)) {
      // `console` itself, but not a property that happens to have its name (`options.console`).
      const isPropertyName = ts.isPropertyAccessExpression(node.parent) && node.parent.name === node;
      if (!isPropertyName) hit = node.text;
    }
    if (hit !== undefined) {
      found.push(`${file.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${hit}`);
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

describe('internal/ leaves the process to cmd/', () => {
  it('finds each use, and none in comments or strings', () => {
    const source = [
      'const args = process.argv.slice(2);',
      '// process.exit(1) is for cmd/',
      "const s = 'process.stdout';",
      'process.stderr.write("x");',
      'if (bad) process.exit(2);',
      'console.log("x");',
      'const log = console;',
      'const env = process.env;',
      'const quiet = options.console;',
    ].join('\n');
    expect(cmdOnlyUses('x.ts', source)).toEqual([
      '1: process.argv',
      '4: process.stderr',
      '5: process.exit',
      '6: console',
      '7: console',
    ]);
  });

  it('never reads process.argv, exits, or writes to stdout, stderr or the console', () => {
    const files = sourceFiles(['internal']);
    expect(files.length).toBeGreaterThan(100);
    const uses = files.flatMap((file) =>
      cmdOnlyUses(file, readFileSync(path.join(repoRoot, file), 'utf8')).map((use) => `${file}:${use}`),
    );
    expect(uses).toEqual([]);
  });
});
