import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { stringify as tomlStringify } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { stringify as yamlStringify } from 'yaml';
import { loadAgentFile } from '../../internal/agent/load.js';
import { ConfigError } from '../../internal/errors.js';
import { tempDir } from './helpers.js';

const dir = tempDir();

const SEEDS: Record<'toml' | 'yaml' | 'md', string> = {
  toml: `name = "seed"\nsystem_prompt = """\nmodel = 1\n"""\n'stream' = false\ndescription = "d"\nmodel = "anthropic/claude-haiku-4-5"\ntools = ["read_file"]\nsub_agents = ["x"]\nworkdir = "~/w"\n[sub_agents_config]\nmax_depth = 2\n[params]\ntemperature = 0\n[params.response_format]\ntype = "json_schema"\n[params.response_format.schema]\nname = "s"\ntype = "object"\n[[mcp_servers]]\nname = "m"\ncommand = "c"\nenv = { A = "\${B}" }\n`,
  yaml: `name: seed\nmodel: openai/gpt-4o\ntools: [read_file]\nmemory: { enabled: true, last_n: 3 }\nretry:\n  backoff: linear\nmcp_servers:\n  - name: m\n    url: http://127.0.0.1:1/mcp\n    headers: { A: "\${B}" }\n`,
  md: `---\nname: seed\ndescription: Use this: when asked\ntools: Read, Bash(git:*), mcp__x__y, Agent(a, b), mcp_*\nmodel: sonnet\nmaxTurns: 3\ncolor: red\ntimeout_mins: 1\nkind: local\nskills: [one, two]\nmcpServers:\n  s: { httpUrl: "http://127.0.0.1:1/mcp", trust: true }\n  t: { type: stdio, command: c }\n---\nYou are a seed.\n`,
};

/** Loads `content` as an agent file: it must either load or fail with a ConfigError, never crash. */
async function check(format: 'toml' | 'yaml' | 'md', content: string | Uint8Array): Promise<void> {
  const file = join(dir, `agent.${format}`);
  writeFileSync(file, content);
  try {
    await loadAgentFile(file, { HOME: '/home/u', B: 'b' });
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    expect(error.message).not.toContain('\n');
  }
}

const format = fc.constantFrom<'toml' | 'yaml' | 'md'>('toml', 'yaml', 'md');
const noise = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.constantFrom(
    '"',
    "'",
    '[',
    ']',
    '{',
    '}',
    '=',
    ':',
    ': ',
    '\n',
    '---',
    '#',
    '&a',
    '*a',
    '!!',
    '\\',
    '\u0000',
    '\uFEFF',
    '- ',
  ),
);

/** Random edits of a valid file: insert, delete, duplicate or swap pieces. */
const mutated = format.chain((kind) =>
  fc
    .array(
      fc.tuple(
        fc.nat(),
        fc.nat({ max: 20 }),
        noise,
        fc.constantFrom('insert', 'delete', 'replace', 'dupline', 'swaplines'),
      ),
      { minLength: 1, maxLength: 4 },
    )
    .map((edits) => {
      let text = SEEDS[kind];
      for (const [at, length, piece, edit] of edits) {
        const position = at % (text.length + 1);
        if (edit === 'insert') text = text.slice(0, position) + piece + text.slice(position);
        else if (edit === 'delete') text = text.slice(0, position) + text.slice(position + length);
        else if (edit === 'replace') text = text.slice(0, position) + piece + text.slice(position + length);
        else {
          const lines = text.split('\n');
          const i = at % lines.length;
          const j = (at + length) % lines.length;
          if (edit === 'dupline') lines.splice(i, 0, lines[i]!);
          else [lines[i], lines[j]] = [lines[j]!, lines[i]!];
          text = lines.join('\n');
        }
      }
      return { kind, text };
    }),
);

const FIELD_NAMES = [
  'name',
  'model',
  'description',
  'tools',
  'sub_agents',
  'params',
  'temperature',
  'mcp_servers',
  'memory',
  'retry',
  'sub_agents_config',
  'max_depth',
  'timeout',
  'url',
  'command',
  'maxTurns',
  'disallowedTools',
  '__proto__',
  'constructor',
  'toString',
];
const key = fc.oneof(fc.constantFrom(...FIELD_NAMES), fc.string({ maxLength: 8 }));
const tree = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.string({ maxLength: 20 }),
    fc.integer({ min: -10, max: 100 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.array(tie('value'), { maxLength: 3 }),
    tie('table'),
  ),
  table: fc.dictionary(key, tie('value'), { maxKeys: 5 }),
}));
/** Structured files: random tables (with agent-like keys) serialised by real TOML / YAML writers. */
const structured = fc.tuple(format, tree.table).map(([kind, table]) => {
  const data = { name: 'x', model: 'a/b', ...table };
  if (kind === 'toml') return { kind, text: tomlStringify(data) };
  const yaml = yamlStringify(data);
  return { kind, text: kind === 'yaml' ? yaml : `---\n${yaml}---\nbody\n` };
});

/**
 * Only a guard against a hang: each property writes and loads hundreds of files, which on a busy
 * 2-core machine (CI with other work running) took over 20 s.
 */
const PROPERTY_TIMEOUT_MS = 180_000;

describe('agent loaders under random input (fast-check)', () => {
  it(
    'never crash on random bytes and text: every failure is a ConfigError',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          format,
          fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.uint8Array({ maxLength: 200 })),
          (kind, content) => check(kind, content),
        ),
        { numRuns: 800 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'never crash on mutated valid files',
    async () => {
      await fc.assert(
        fc.asyncProperty(mutated, ({ kind, text }) => check(kind, text)),
        { numRuns: 1000 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it(
    'never crash on random structured files written by TOML and YAML serialisers',
    async () => {
      await fc.assert(
        fc.asyncProperty(structured, ({ kind, text }) => check(kind, text)),
        { numRuns: 800 },
      );
    },
    PROPERTY_TIMEOUT_MS,
  );

  it('load every seed unchanged', async () => {
    for (const kind of ['toml', 'yaml', 'md'] as const) {
      writeFileSync(join(dir, `seed.${kind}`), SEEDS[kind]);
      await expect(loadAgentFile(join(dir, `seed.${kind}`), { HOME: '/home/u' })).resolves.toMatchObject({
        name: 'seed',
      });
    }
  });
});
