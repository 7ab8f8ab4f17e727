import { describe, expect, it } from 'vitest';
import { loadFrom } from './helpers.js';

const load = (content: string, name = 'agent.yaml') => loadFrom(name, content);

describe('YAML agent files (the TOML fields)', () => {
  it('loads the same fields as TOML, from .yaml and .yml', async () => {
    const yaml = `name: y
description: A YAML agent
model: ollama/llama3.2
tools: [read_file]
sub_agents: [helper]
sub_agents_config: { max_depth: 2, parallel: false }
params:
  temperature: 0
  response_format: json_object
mcp_servers:
  - name: fs
    command: npx
    args: ["-y", "server"]
    env: { TOKEN: "\${TOKEN}" }
`;
    for (const name of ['agent.yaml', 'agent.yml']) {
      const spec = await load(yaml, name);
      expect(spec).toMatchObject({
        name: 'agent',
        declaredName: 'y',
        format: 'yaml',
        model: { provider: 'ollama', model: 'llama3.2' },
        tools: ['read_file'],
        subAgentsConfig: { maxDepth: 2, parallel: false },
        params: { temperature: 0, responseFormat: { type: 'json_object' } },
        mcpServers: [
          {
            name: 'fs',
            transport: 'stdio',
            command: 'npx',
            args: ['-y', 'server'],
            env: { TOKEN: `\${TOKEN}` },
          },
        ],
      });
    }
  });

  it('reports schema errors with line and column', async () => {
    await expect(load('name: y\nmodel: a/b\nparams:\n  temperature: hot\n')).rejects.toThrow(
      /agent\.yaml:4:16: params\.temperature: must be a number \(got "hot"\)/,
    );
  });

  it('rejects duplicate keys, several documents, custom tags and alias bombs as config errors', async () => {
    await expect(load('name: y\nname: z\nmodel: a/b\n')).rejects.toThrow(
      /agent\.yaml:2:1: invalid YAML: Map keys must be unique/,
    );
    await expect(load('name: y\nmodel: a/b\n---\nname: z\n')).rejects.toThrow(/agent\.yaml:\d+:\d+: /);
    await expect(load('name: !!js/function "x"\nmodel: a/b\n')).rejects.toThrow(/agent\.yaml:1:\d+: /);
    const bomb = ['a: &a [x, x, x, x, x, x, x, x, x]'];
    for (let i = 0; i < 8; i++)
      bomb.push(
        `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [${Array(9)
          .fill(`*${String.fromCharCode(97 + i)}`)
          .join(', ')}]`,
      );
    await expect(load(`${bomb.join('\n')}\nname: y\nmodel: a/b\n`)).rejects.toThrow(/agent\.yaml/);
  });
});
