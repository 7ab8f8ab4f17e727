import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mcpResultToOutput } from '../../internal/tools/mcp/content.js';
import { classifyOversize, JsonLines } from '../../internal/tools/mcp/json-lines.js';
import { MAX_OUTPUT_BYTES as MAX_RESULT_BYTES } from '../../internal/tools/output-limit.js';
import { REPO_ROOT } from '../run/cli.js';
import { ctx, open, stdio, tool } from './mcp-toolset.js';

const RAW = join(REPO_ROOT, 'test/tools/fixtures/raw-mcp-server.mjs');
const MiB = 2 ** 20;

/**
 * A result over the 10 MiB a stdio message may take fails that call only, saying so; the server
 * stays connected. (The SDK's ReadBuffer threw, the connection was torn down: the call got
 * `Connection closed` and every later call `Not connected`.)
 */
describe('an MCP stdio result over 10 MiB', () => {
  for (const order of ['last', 'first'] as const) {
    const servers = order === 'first' ? 'Python servers' : 'TypeScript SDK servers';
    it(`fails that call only, saying so, and the server stays connected: "id" ${order} (${servers})`, async () => {
      const { toolset } = await open([stdio('raw', process.execPath, [RAW])]);
      try {
        // A second call is pending when the oversize answer comes: it must not be the one failed.
        const [big, count] = await Promise.all([
          tool(toolset, 'big').execute({ bytes: 11 * MiB, order }, ctx()),
          tool(toolset, 'count').execute({ a: 1, b: 2 }, ctx()),
        ]);
        expect(big.isError).toBe(true);
        expect(big.content).toMatch(
          /^mcp server "raw": the result of tool "big" is \d{8} bytes, over the 10 MiB limit for one message; it was dropped \(the server is still connected\)$/,
        );
        expect(count).toEqual({ content: '3', isError: false });
        expect(await tool(toolset, 'count').execute({ a: 2, b: 2 }, ctx())).toEqual({
          content: '4',
          isError: false,
        });
      } finally {
        await toolset.close();
      }
    }, 20_000);
  }

  it('an oversize answer whose id cannot be found fails the one call waiting, saying so', async () => {
    const { toolset } = await open([stdio('raw', process.execPath, [RAW])]);
    try {
      const big = await tool(toolset, 'big').execute({ bytes: 11 * MiB, order: 'hidden' }, ctx());
      expect(big.content).toMatch(
        /^mcp server "raw": the result of tool "big" is \d{8} bytes, over the 10 MiB limit for one message; it was dropped/,
      );
      expect(await tool(toolset, 'count').execute({ a: 2, b: 2 }, ctx())).toMatchObject({ content: '4' });
    } finally {
      await toolset.close();
    }
  }, 20_000);

  it('an oversize answer whose id cannot be found, with several calls waiting, fails them all rather than leave them hanging', async () => {
    const { toolset } = await open([stdio('raw', process.execPath, [RAW])]);
    try {
      const outs = await Promise.all([
        tool(toolset, 'big').execute({ bytes: 11 * MiB, order: 'hidden' }, ctx()),
        tool(toolset, 'count').execute({ a: 1, b: 2 }, ctx()),
      ]);
      expect(outs.map((out) => out.isError)).toEqual([true, true]);
      expect(outs[1]?.content).toMatch(
        /^mcp server "raw": the result of tool "count" may have been an answer of \d{8} bytes, over the 10 MiB limit for one message, that named no request; it was dropped, and the 2 calls waiting all failed \(the server is still connected\)$/,
      );
      expect(await tool(toolset, 'count').execute({ a: 2, b: 2 }, ctx())).toMatchObject({ content: '4' });
    } finally {
      await toolset.close();
    }
  }, 20_000);

  it('an oversize line that answers nothing is skipped, and the call after it answered', async () => {
    const { toolset } = await open([stdio('raw', process.execPath, [RAW])]);
    try {
      expect(await tool(toolset, 'noise').execute({ bytes: 11 * MiB }, ctx())).toEqual({
        content: 'ok',
        isError: false,
      });
    } finally {
      await toolset.close();
    }
  }, 20_000);

  it('a result just under the limit still arrives (then capped for the model)', async () => {
    const { toolset } = await open([stdio('raw', process.execPath, [RAW])]);
    try {
      const out = await tool(toolset, 'big').execute({ bytes: 9 * MiB }, ctx());
      expect(out.isError).toBe(false);
      expect(out.content).toMatch(/\n\.\.\. \[output truncated, exceeded 100KB: \d+ more bytes not shown\]$/);
    } finally {
      await toolset.close();
    }
  }, 20_000);
});

describe('JsonLines', () => {
  it('splits lines across chunks, strips \\r, and skips an oversize line to its end', () => {
    const lines = new JsonLines(10);
    expect(lines.push(Buffer.from('{"a"'))).toEqual([]);
    expect(lines.push(Buffer.from(':1}\r\n12345'))).toEqual([{ text: '{"a":1}' }]);
    expect(lines.push(Buffer.from('67890'))).toEqual([]);
    expect(lines.push(Buffer.from('abc\nok\n'))).toEqual([
      { oversize: { bytes: 13, head: '1234567890abc', tail: '1234567890abc' } },
      { text: 'ok' },
    ]);
  });

  it('keeps only both ends of an oversize line', () => {
    const lines = new JsonLines(100);
    const line = `{"result":${'x'.repeat(5000)},"jsonrpc":"2.0","id":7}`;
    for (let i = 0; i < line.length; i += 333) lines.push(Buffer.from(line.slice(i, i + 333)));
    const [taken] = lines.push(Buffer.from('\n'));
    if (!taken || !('oversize' in taken)) throw new Error('no oversize line');
    expect(taken.oversize.bytes).toBe(line.length);
    expect(taken.oversize.head).toBe(line.slice(0, 1024));
    expect(taken.oversize.tail).toBe(line.slice(-1024));
  });
});

describe('classifyOversize', () => {
  const of = (head: string, tail = head) => classifyOversize({ bytes: 0, head, tail });
  it('finds the id of a response, first or last', () => {
    expect(of('{"result":{"content":[', 'xx"}]},"jsonrpc":"2.0","id":7}')).toEqual({
      kind: 'response',
      id: 7,
    });
    expect(of('{"jsonrpc":"2.0","id":"a-1","result":{"x', 'xx"}]}}')).toEqual({
      kind: 'response',
      id: 'a-1',
    });
    expect(of(' { "jsonrpc" : "2.0" , "id" : 3 , "error" : {"x', 'x"}}\r')).toEqual({
      kind: 'response',
      id: 3,
    });
    expect(of('{"result":{"x', 'x","id":7}}')).toEqual({ kind: 'response' });
  });
  it('tells requests, notifications and non-JSON apart from responses', () => {
    expect(of('{"method":"notifications/message","params":{"x', 'x"}},"jsonrpc":"2.0"}').kind).toBe('other');
    expect(of('{"method":"sampling/createMessage","params":{"x', 'x"}},"jsonrpc":"2.0","id":0}').kind).toBe(
      'other',
    );
    expect(of('{"jsonrpc":"2.0","id":0,"method":"x","params":{"x').kind).toBe('other');
    expect(of('nnnnnnnn').kind).toBe('other');
  });
});

describe('mcpResultToOutput cap', () => {
  const text = (value: string) => ({ content: [{ type: 'text', text: value }] });
  const marker = /\n\.\.\. \[output truncated, exceeded 100KB: (\d+) more bytes not shown\]$/;

  it('passes a result up to 100 KB whole', () => {
    const value = 'é'.repeat(MAX_RESULT_BYTES / 2);
    expect(mcpResultToOutput(text(value)).content).toBe(value);
  });

  it('cuts a 5 MiB result at 100 KB and says how much more there was', () => {
    const out = mcpResultToOutput({ ...text('y'.repeat(5 * MiB)), isError: true });
    expect(out.isError).toBe(true);
    const more = marker.exec(out.content);
    expect(Number(more?.[1])).toBe(5 * MiB - MAX_RESULT_BYTES);
    expect(out.content.replace(marker, '')).toBe('y'.repeat(MAX_RESULT_BYTES));
  });

  it('cuts at a character boundary: no half of a surrogate pair, no broken UTF-8', () => {
    // 😀 is 4 bytes of UTF-8 and 2 UTF-16 units; after one ASCII byte, 100 KB falls inside one.
    const value = `a${'😀'.repeat(MAX_RESULT_BYTES / 4 + 10)}`;
    const out = mcpResultToOutput(text(value));
    const kept = out.content.replace(marker, '');
    expect(kept).toBe(`a${'😀'.repeat(MAX_RESULT_BYTES / 4 - 1)}`);
    expect(kept).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
    expect(kept).not.toContain('\uFFFD');
    expect(Buffer.byteLength(kept) + Number(marker.exec(out.content)?.[1])).toBe(Buffer.byteLength(value));
  });
});
