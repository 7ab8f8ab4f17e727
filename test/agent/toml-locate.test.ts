import { describe, expect, it } from 'vitest';
import { locateInToml, tomlPositions } from '../../internal/config/toml-locate.js';
import { loadErrorFrom, loadFrom } from './helpers.js';

const at = (text: string, ...segments: (string | number)[]) => locateInToml(tomlPositions(text), segments);

const errorOf = (content: string) => loadErrorFrom('agent.toml', content);

describe('TOML positions (smol-toml keeps none)', () => {
  it('finds keys of the root, of tables, of arrays of tables and of their sub-tables', () => {
    const text = [
      'name = "x"', // 1
      'sub_agents_config.max_depth = 2', // 2
      '', // 3
      '[memory]', // 4
      '  last_n = 3', // 5
      '[[mcp_servers]]', // 6
      'name = "a"', // 7
      '[[mcp_servers]]', // 8
      '\'name\' = "b"', // 9
      '[mcp_servers.headers]', // 10
      '"X-Key" = "v"', // 11
    ].join('\n');
    expect(at(text, 'name')).toEqual({ line: 1, column: 1 });
    expect(at(text, 'sub_agents_config', 'max_depth')).toEqual({ line: 2, column: 1 });
    expect(at(text, 'memory', 'last_n')).toEqual({ line: 5, column: 3 });
    expect(at(text, 'memory', 'path')).toEqual({ line: 4, column: 1 });
    expect(at(text, 'mcp_servers', 0, 'name')).toEqual({ line: 7, column: 1 });
    expect(at(text, 'mcp_servers', 1, 'name')).toEqual({ line: 9, column: 1 });
    expect(at(text, 'mcp_servers', 1, 'headers', 'X-Key')).toEqual({ line: 11, column: 1 });
    expect(at(text, 'mcp_servers', 1, 'url')).toEqual({ line: 8, column: 1 });
  });

  it('skips multi-line strings, falls back to the parent of inline tables and array items, knows nothing of a missing key', () => {
    const text = [
      'system_prompt = """', // 1
      'model = "not a key"', // 2
      'tools = \\"""', // 3 (escaped: still inside)
      '"""', // 4
      "notes = '''one line'''", // 5
      'model = "a/b"', // 6
      'tools = [', // 7
      '  "read_file",', // 8
      ']', // 9
      'headers = { A = "1" }', // 10
    ].join('\r\n');
    expect(at(text, 'model')).toEqual({ line: 6, column: 1 });
    expect(at(text, 'tools', 0)).toEqual({ line: 7, column: 1 });
    expect(at(text, 'headers', 'A')).toEqual({ line: 10, column: 1 });
    expect(at(text, 'description')).toBeUndefined();
    expect(at('"\\U0001F600" = 1\nb = 2', 'b')).toEqual({ line: 2, column: 1 });
  });
});

describe('TOML findings carry file:line:column', () => {
  it('for schema errors, unknown keys and errors found after validation', async () => {
    const spec = await loadFrom('agent.toml', 'name = "x"\nmodel = "a/b"\n\n[params]\ntemprature = 1\n', {});
    expect(spec.warnings).toEqual([
      expect.stringMatching(
        /agent\.toml:5:1: params\.temprature: unknown field, ignored \(did you mean "temperature"\?\)$/,
      ),
    ]);
    expect(spec.params.temperature).toBeUndefined();
    expect(await errorOf('name = "x"\nmodel = "a/b"\nworkdir = "$AXE_NOT_SET_ANYWHERE"\n')).toMatch(
      /agent\.toml:3:1: workdir: \$AXE_NOT_SET_ANYWHERE is not set/,
    );
  });
});
