import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { repoRoot, sourceFiles } from './source-files.js';

/** The one module of the runner that may reach into the delegation tools: it composes a tool set. */
const COMPOSITION_MODULE = 'internal/runner/compose-tools.ts';

/**
 * The relative module names a source file imports or re-exports: `import`, `import type`,
 * `export … from`, `export * from`, side-effect and dynamic `import()`. TypeScript's own scanner
 * reads them, so comments and strings that merely look like imports are not counted.
 */
function relativeImports(source: string): string[] {
  const { importedFiles } = ts.preProcessFile(source, true, true);
  return importedFiles.map((file) => file.fileName).filter((name) => name.startsWith('.'));
}

/** The file an import names, repository-relative; undefined when it is not a .ts file here. */
function resolveImport(from: string, name: string): string | undefined {
  const target = path.posix.join(path.posix.dirname(from), name);
  const candidates = [target.replace(/\.js$/, '.ts'), `${target}.ts`, `${target}/index.ts`];
  return candidates.find(
    (candidate) => candidate.endsWith('.ts') && existsSync(path.join(repoRoot, candidate)),
  );
}

/** File → the files it imports, among `files`. */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const source = readFileSync(path.join(repoRoot, file), 'utf8');
    const targets = relativeImports(source)
      .map((name) => resolveImport(file, name))
      .filter((target): target is string => target !== undefined && known.has(target));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The strongly connected sets of more than one file, or of one file importing itself (Tarjan). */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next++;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file) as number, low.get(target) as number));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file) as number, index.get(target) as number));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const set: string[] = [];
    let member: string;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      set.push(member);
    } while (member !== file);
    if (set.length > 1 || graph.get(file)?.includes(file)) found.push(set);
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return found;
}

/** One circle through `set`, as a readable path: `a.ts -> b.ts -> a.ts`. */
function describeCircle(graph: ReadonlyMap<string, readonly string[]>, set: readonly string[]): string {
  const members = new Set(set);
  const start = [...set].sort()[0] as string;
  // Breadth-first inside the set, from the start back to it: the shortest circle through it.
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const file = queue.shift() as string;
    for (const target of graph.get(file) ?? []) {
      if (!members.has(target) || cameFrom.has(target)) continue;
      cameFrom.set(target, file);
      if (target === start) queue.length = 0;
      else queue.push(target);
    }
  }
  const between: string[] = [];
  for (let file = cameFrom.get(start) as string; file !== start; file = cameFrom.get(file) as string) {
    between.unshift(file);
  }
  return [start, ...between, start].join(' -> ');
}

/**
 * The rooms from the top down, as ARCHITECTURE.md draws them: a file imports only its own room and
 * the rooms after it. Rooms on one line may import each other's files (never in a circle).
 */
const LAYERS: readonly (readonly string[])[] = [
  ['cmd'],
  ['queue'],
  ['batch'],
  ['gc', 'invocation'],
  ['output', 'telemetry'],
  ['record'],
  ['startup'],
  ['delegation'],
  ['runner'],
  ['cassette'],
  ['fanout'],
  ['budget'],
  ['memory', 'artifacts'],
  ['tools'],
  ['agent'],
  ['prices'],
  ['provider'],
  ['ratelimit'],
  ['config'],
  ['http', 'fs'],
  ['internal/*.ts'],
];

/** The imports that go up, each named in ARCHITECTURE.md: the room that imports, and the room. */
const UPWARD_ALLOWED: ReadonlySet<string> = new Set([
  // The runner's one door to the delegation tools (the test below keeps it the only one).
  `${COMPOSITION_MODULE} -> delegation`,
  // config.toml's values are provider JSON, and a provider's settings name its wire and AWS source.
  'config -> provider',
  // Agent files are checked against the built-in tool names.
  'agent -> tools',
]);

/** `internal/fs/glob.ts` → `fs`; `internal/errors.ts` → `internal/*.ts`; `cmd/run.ts` → `cmd`. */
function roomOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'cmd') return 'cmd';
  return parts.length === 2 ? 'internal/*.ts' : (parts[1] as string);
}

describe('the import graph of internal/ and cmd/', () => {
  it('reads every kind of relative import, and nothing in comments or strings', () => {
    const source = [
      "import type { A } from './a.js';",
      "export * from './b.js';",
      "export { c } from '../c.js';",
      'import {\n  d,\n  e,\n} from "./d.js";',
      "const lazy = () => import('./e.js');",
      "import './f.js';",
      "import { readFileSync } from 'node:fs';",
      "// import { g } from './g.js';",
      "/* export { h } from './h.js'; */ const glob = '/*';",
      "import { i } from './i.js';",
    ].join('\n');
    expect(relativeImports(source)).toEqual([
      './a.js',
      './b.js',
      '../c.js',
      './d.js',
      './e.js',
      './f.js',
      './i.js',
    ]);
  });

  it('finds a circle, and names it', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
    ]);
    const found = circles(graph).map((set) => describeCircle(graph, set));
    expect(found.sort()).toEqual(['a.ts -> b.ts -> c.ts -> a.ts', 'e.ts -> e.ts']);
  });

  const files = sourceFiles(['internal', 'cmd']);
  const graph = importGraph(files);

  it('has no import circle, type-only imports included', () => {
    expect(files.length).toBeGreaterThan(100);
    const found = circles(graph).map((set) => describeCircle(graph, set));
    expect(found).toEqual([]);
  });

  it('imports only down the rooms of ARCHITECTURE.md, but for the exceptions it names', () => {
    const depth = new Map(
      LAYERS.flatMap((rooms, index) => rooms.map((room): [string, number] => [room, index])),
    );
    const unknown = [...new Set(files.map(roomOf))].filter((room) => !depth.has(room));
    expect(unknown).toEqual([]);
    const upward = [...graph].flatMap(([file, targets]) =>
      targets
        .filter((target) => (depth.get(roomOf(target)) as number) < (depth.get(roomOf(file)) as number))
        .filter(
          (target) =>
            !UPWARD_ALLOWED.has(`${roomOf(file)} -> ${roomOf(target)}`) &&
            !UPWARD_ALLOWED.has(`${file} -> ${roomOf(target)}`),
        )
        .map((target) => `${file} -> ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it('keeps cmd/ out of internal/: the library never imports the CLI', () => {
    const reaching = [...graph]
      .filter(([file]) => file.startsWith('internal/'))
      .flatMap(([file, targets]) =>
        targets.filter((target) => target.startsWith('cmd/')).map((target) => `${file} -> ${target}`),
      );
    expect(reaching).toEqual([]);
  });

  it('keeps the delegation tools out of the runner but for the module that composes a tool set', () => {
    expect(graph.get(COMPOSITION_MODULE)?.some((target) => target.startsWith('internal/delegation/'))).toBe(
      true,
    );
    const reaching = [...graph]
      .filter(([file]) => file.startsWith('internal/runner/') && file !== COMPOSITION_MODULE)
      .flatMap(([file, targets]) =>
        targets
          .filter((target) => target.startsWith('internal/delegation/'))
          .map((target) => `${file} -> ${target}`),
      );
    expect(reaching).toEqual([]);
  });
});
