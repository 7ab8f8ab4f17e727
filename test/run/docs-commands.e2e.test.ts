import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AXE_BIN, REPO_ROOT, runAxe, TempHome } from './cli.js';
import { type DocCommand, docCommands } from './doc-commands.js';

/**
 * Every `axe` command in a ```sh block of the README and of docs/ is one the CLI takes: its
 * command exists and each flag is one that command declares (read from the CLI's own `--help`),
 * with a value where the flag needs one. Unless its block is marked `<!-- not-run -->`, the command
 * is also run by the built binary, in the order the page gives, in a home of its own whose working
 * directory is a project like a fresh clone: `agents/` as shipped, and the shipped agents in
 * `./axe/agents` too (the project agent directory), so that `axe run reviewer` finds one. An
 * `axe run` gets `--dry-run` unless it replays a cassette, so nothing calls a model; `< file`
 * feeds the file on stdin. It must exit 0.
 */
const PAGES = [
  'README.md',
  ...readdirSync(path.join(REPO_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

/**
 * `axe agents edit` opens $VISUAL with the file: this editor does what the user would, give the
 * scaffold a model that exists (Node, so that it is the same on every system).
 */
const EDITOR_SCRIPT = `const fs = require('node:fs');
const file = process.argv[2];
fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(/^model = .*$/m, 'model = "anthropic/claude-haiku-4-5"'));
`;

interface Flag {
  value: 'none' | 'required' | 'optional';
}

const homes: TempHome[] = [];
beforeAll(() => {
  if (!existsSync(AXE_BIN)) throw new Error(`${AXE_BIN} is missing: run \`npm run build\` first`);
});
afterAll(() => {
  for (const home of homes) home.cleanup();
});

/** A home whose root is the working directory: a project as a fresh clone has it. */
function project(): TempHome {
  const home = new TempHome();
  homes.push(home);
  cpSync(path.join(REPO_ROOT, 'agents'), path.join(home.root, 'agents'), { recursive: true });
  const projectAgents = path.join(home.root, 'axe', 'agents');
  mkdirSync(projectAgents, { recursive: true });
  for (const name of readdirSync(path.join(REPO_ROOT, 'agents'))) {
    const file = path.join(REPO_ROOT, 'agents', name);
    if (statSync(file).isFile()) cpSync(file, path.join(projectAgents, name));
  }
  return home;
}

/** The lines of a `--help` section (`Commands:`, `Options:`), up to the next blank line. */
function section(help: string, title: string): string[] {
  const start = help.indexOf(`\n${title}:\n`);
  if (start < 0) return [];
  const body = help.slice(start + title.length + 3);
  return body.slice(0, body.search(/\n\n|$/)).split('\n');
}

/** The commands and each command's flags, as the CLI's help lists them. */
async function cliDeclarations(env: NodeJS.ProcessEnv): Promise<Map<string, Map<string, Flag>>> {
  const help = async (args: string[]): Promise<string> => {
    const result = await runAxe(args, { env });
    expect(result, `axe ${args.join(' ')}`).toMatchObject({ code: 0, stderr: '' });
    return result.stdout;
  };
  const flagsOf = (text: string): Map<string, Flag> => {
    const flags = new Map<string, Flag>();
    for (const line of section(text, 'Options')) {
      const match = /^ {2}(?:(-\w), )?(--[\w-]+)(?: (<|\[))?/.exec(line);
      if (!match) continue;
      const value = match[3] === '<' ? 'required' : match[3] === '[' ? 'optional' : 'none';
      for (const name of [match[1], match[2]]) if (name) flags.set(name, { value });
    }
    return flags;
  };
  const global = await help(['--help']);
  const commands = section(global, 'Commands').map((line) => line.trim().split(/\s/)[0] as string);
  expect(commands).toContain('run');
  const own = await Promise.all(commands.map((command) => help([command, '--help'])));
  return new Map(
    commands.map((command, i) => [command, new Map([...flagsOf(global), ...flagsOf(own[i] ?? '')])]),
  );
}

/** What is wrong with a command's words, by the CLI's declarations; undefined when nothing is. */
function flagProblem(command: DocCommand, declared: Map<string, Map<string, Flag>>): string | undefined {
  const [name, ...rest] = command.args;
  const flags = declared.get(name ?? '');
  if (!flags) return `unknown command "${name}"`;
  for (let i = 0; i < rest.length; i++) {
    const word = rest[i] as string;
    if (word === '--') break;
    if (!word.startsWith('-') || /^-\d/.test(word)) continue;
    const [flagName, inline] = word.split(/=(.*)/s) as [string, string | undefined];
    const flag = flags.get(flagName);
    const negated = flagName.startsWith('--no-') && flags.get(`--${flagName.slice(5)}`)?.value === 'none';
    if (!flag && !negated) return `"${name}" has no flag ${flagName}`;
    if (!flag || flag.value === 'none' || inline !== undefined) continue;
    const next = rest[i + 1];
    const takes = next !== undefined && !next.startsWith('-');
    if (flag.value === 'required' && !takes) return `${flagName} needs a value`;
    if (takes) i++;
  }
  return undefined;
}

/** The arguments the test runs: an `axe run` that would call a model is a dry run. */
function offlineArgs(args: string[]): string[] {
  if (args[0] !== 'run' || args.includes('--replay') || args.includes('--dry-run')) return args;
  return [...args, '--dry-run'];
}

/** Read once, from the first page's home (the help needs no files). */
let declarations: Promise<Map<string, Map<string, Flag>>> | undefined;

const byPage = PAGES.map((page) => ({
  page,
  commands: docCommands(page, readFileSync(path.join(REPO_ROOT, page), 'utf8')),
}));

describe("the docs' commands", () => {
  it('are found: the README and the pages with command blocks give dozens, most of them run', () => {
    const all = byPage.flatMap(({ commands }) => commands);
    expect(byPage.find(({ page }) => page === 'README.md')?.commands.length).toBeGreaterThanOrEqual(15);
    expect(all.filter((command) => command.run).length).toBeGreaterThanOrEqual(20);
    // Both spellings are read, and the Quick start's `npm install && npx axe run …` too.
    const readmeLines = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8').split('\n');
    const quickStart =
      readmeLines.findIndex((line) => line.startsWith('npm install && npx axe run team-lead')) + 1;
    expect(quickStart).toBeGreaterThan(0);
    expect(
      all.some((command) => command.where === `README.md:${quickStart}` && command.args[1] === 'team-lead'),
    ).toBe(true);
    expect(all.some((command) => command.where.startsWith('docs/run.md'))).toBe(true);
  });

  it('each command names its docs page in --help, a page that exists and is linked from the README', async () => {
    const home = project();
    const env = home.env();
    const readme = readFileSync(path.join(REPO_ROOT, 'README.md'), 'utf8');
    const docsLine = async (args: string[]): Promise<string | undefined> => {
      const { stdout } = await runAxe(args, { env });
      return /\nDocs:\n {2}(.+)\n$/.exec(stdout)?.[1];
    };
    expect(await docsLine(['--help'])).toBe(path.join(REPO_ROOT, 'README.md'));
    expect(await docsLine(['version', '--help'])).toBe(path.join(REPO_ROOT, 'README.md'));
    for (const command of ['run', 'agents', 'validate', 'config', 'runs', 'gc', 'models']) {
      const page = await docsLine([command, '--help']);
      expect(path.relative(REPO_ROOT, page ?? ''), command).toMatch(/^docs\/[a-z-]+\.md$/);
      expect(existsSync(page as string), page).toBe(true);
      expect(readme, page).toContain(`](${path.relative(REPO_ROOT, page as string)})`);
    }
  });

  it.each(byPage.filter(({ commands }) => commands.length > 0))(
    '$page: each names a command and flags the CLI declares, and runs',
    async ({ commands }) => {
      const home = project();
      const editor = home.file('editor.cjs', EDITOR_SCRIPT);
      const env = home.env(undefined, { VISUAL: `'${process.execPath}' '${editor}'` });
      declarations ??= cliDeclarations(env);
      const declared = await declarations;
      const problems: string[] = [];
      for (const command of commands) {
        const shown = `${command.where}: axe ${command.args.join(' ')}`;
        const problem = flagProblem(command, declared);
        if (problem !== undefined) problems.push(`${shown}: ${problem}`);
        if (problem !== undefined || !command.run) continue;
        const stdin =
          command.stdinFile === undefined
            ? undefined
            : readFileSync(path.join(home.root, command.stdinFile), 'utf8');
        const result = await runAxe(offlineArgs(command.args), {
          env: { ...env, ...command.env },
          cwd: home.root,
          ...(stdin !== undefined && { stdin }),
        });
        if (result.code !== 0)
          problems.push(`${shown}: exit ${result.code}: ${(result.stderr || result.stdout).trim()}`);
      }
      expect(problems).toEqual([]);
    },
  );
});
