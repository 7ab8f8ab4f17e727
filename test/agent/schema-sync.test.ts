import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseToml } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { loadAgentFile } from '../../internal/agent/load.js';
import { scaffoldAgent } from '../../internal/agent/scaffold.js';
import { isObject } from '../../internal/provider/json.js';
import type { JsonObject } from '../../internal/provider/types.js';
import { tempDir } from './helpers.js';

const repo = join(import.meta.dirname, '..', '..');
const read = (path: string): string => readFileSync(join(repo, path), 'utf8');
const agentSchema = JSON.parse(read('schemas/agent.schema.json')) as JsonObject;
const configSchema = JSON.parse(read('schemas/config.schema.json')) as JsonObject;

/** Every field path of a schema with its description: `params.temperature`, `mcp_servers[].url`, … */
function schemaFields(schema: JsonObject, prefix = ''): Map<string, string> {
  const fields = new Map<string, string>();
  const properties = isObject(schema.properties) ? schema.properties : {};
  for (const [key, child] of Object.entries(properties)) {
    if (!isObject(child)) continue;
    const items = child.items;
    if (child.type === 'array' && isObject(items) && isObject(items.properties)) {
      fields.set(`${prefix}${key}[]`, String(child.description));
      for (const [path, text] of schemaFields(items, `${prefix}${key}[].`)) fields.set(path, text);
    } else if (child.type === 'object' && isObject(child.properties)) {
      fields.set(`${prefix}${key}`, String(child.description));
      for (const [path, text] of schemaFields(child, `${prefix}${key}.`)) fields.set(path, text);
    } else {
      fields.set(`${prefix}${key}`, String(child.description));
    }
  }
  return fields;
}

/** The `| \`path\` | type | meaning |` rows between two markers of a docs page. */
function pageRows(page: string, marker: string): Map<string, string> {
  const text = read(page);
  const section = text.slice(
    text.indexOf(`<!-- ${marker}:start -->`),
    text.indexOf(`<!-- ${marker}:end -->`),
  );
  const rows = new Map<string, string>();
  for (const line of section.split('\n')) {
    const cells = line
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((cell) => cell.trim().replace(/\\\|/g, '|'));
    const path = /^`([^`]+)`$/.exec(cells[0] ?? '')?.[1];
    if (path && cells.length === 3) rows.set(path, cells[2]!);
  }
  return rows;
}

/** Field paths present in a parsed agent file (tables of strings such as headers count as leaves). */
function dataFields(data: JsonObject, schema: JsonObject, prefix = ''): Set<string> {
  const found = new Set<string>();
  const fields = schemaFields(schema);
  const visit = (value: JsonObject, path: string): void => {
    for (const [key, child] of Object.entries(value)) {
      const here = `${path}${key}`;
      if (Array.isArray(child) && fields.has(`${here}[]`)) {
        found.add(`${here}[]`);
        for (const item of child) if (isObject(item)) visit(item, `${here}[].`);
      } else if (isObject(child) && [...fields.keys()].some((field) => field.startsWith(`${here}.`))) {
        found.add(here);
        visit(child, `${here}.`);
      } else {
        found.add(here);
      }
    }
  };
  visit(data, prefix);
  return found;
}

describe('schemas/ is the single source of truth', () => {
  it('the generated validators are up to date with the schemas', () => {
    for (const [schema, generated] of [
      ['schemas/agent.schema.json', 'internal/agent/generated/agent-validator.js'],
      ['schemas/config.schema.json', 'internal/config/generated/config-validator.js'],
    ] as const) {
      const hash = createHash('sha256').update(read(schema)).digest('hex').slice(0, 16);
      expect(read(generated), `${generated} is stale: run node schemas/generate-validators.mjs`).toContain(
        `// schema-hash: ${hash}\n`,
      );
    }
  });

  it('the generated validators leave out what only annotates: no description of the schema is in them', () => {
    for (const [schema, generated] of [
      ['schemas/agent.schema.json', 'internal/agent/generated/agent-validator.js'],
      ['schemas/config.schema.json', 'internal/config/generated/config-validator.js'],
    ] as const) {
      const descriptions = [...read(schema).matchAll(/"description": ("(?:[^"\\]|\\.)*")/g)].map((match) =>
        JSON.stringify(JSON.parse(match[1] as string)),
      );
      expect(descriptions.length).toBeGreaterThan(10);
      const code = read(generated);
      expect(descriptions.filter((text) => code.includes(text))).toEqual([]);
    }
  });

  it('the agents init scaffold has every field, loads as is, and loads with every setting uncommented', async () => {
    const scaffold = scaffoldAgent('demo');
    const dir = tempDir({ 'demo.toml': scaffold });
    await expect(loadAgentFile(join(dir, 'demo.toml'), { HOME: '/home/u' })).resolves.toMatchObject({
      name: 'demo',
    });

    const uncommented = scaffold.replace(/^# ((?:\[\[?[a-z_.]+\]\]?)|(?:[a-z_]+ = .*))$/gm, '$1');
    const all = tempDir({ 'demo.toml': uncommented });
    await expect(loadAgentFile(join(all, 'demo.toml'), { HOME: '/home/u' })).resolves.toMatchObject({
      name: 'demo',
    });
    const present = dataFields(parseToml(uncommented) as JsonObject, agentSchema);
    expect([...present].sort()).toEqual([...schemaFields(agentSchema).keys()].sort());
  });

  it("docs/agent-files.md's agent file reference lists every field with the schema's description", () => {
    expect(Object.fromEntries(pageRows('docs/agent-files.md', 'agent-reference'))).toEqual(
      Object.fromEntries(schemaFields(agentSchema)),
    );
  });

  it("docs/config.md's config reference lists every setting with the schema's description", () => {
    const { providers, runs, defaults, prices } = configSchema.properties as Record<string, JsonObject>;
    const fields = [
      ...schemaFields(providers?.additionalProperties as JsonObject, 'providers.<name>.'),
      ...schemaFields(runs as JsonObject, 'runs.'),
      ...schemaFields(defaults as JsonObject, 'defaults.'),
      ...schemaFields(prices?.additionalProperties as JsonObject, 'prices."<provider>/<model>".'),
    ];
    expect(Object.fromEntries(pageRows('docs/config.md', 'config-reference'))).toEqual(
      Object.fromEntries(fields),
    );
  });
});
