// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the literal ${VAR} syntax of agent files is what is under test
import { getEventListeners } from 'node:events';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { descendantsOf, isRunning, makeSandbox, toolContext, waitFor } from './helpers.js';
import { EVERYTHING, PAGED, shWrapped } from './mcp-servers.js';
import { childPids, ctx, open, stdio, tool } from './mcp-toolset.js';

/** MCP over stdio through createToolset: tools, content, process lifetime (wrappers included). */
describe('MCP over stdio (server-everything, a server nobody here wrote)', () => {
  it('lists the real tools with their schemas, calls them, and ends the process on close', async () => {
    const server = stdio('everything', process.execPath, [EVERYTHING, 'stdio'], {
      GREETING: '${MY_GREETING}',
    });
    const { toolset, reports } = await open([server], {
      tools: ['read_file'],
      env: { MY_GREETING: 'hi-there', ANTHROPIC_API_KEY: 'sk-ant-not-for-servers' },
    });
    const names = toolset.tools.map((t) => t.spec.name);
    expect(names[0]).toBe('read_file');
    expect(names).toEqual(expect.arrayContaining(['echo', 'get-sum', 'get-tiny-image', 'get-env']));
    expect(tool(toolset, 'get-sum').spec.parameters).toMatchObject({
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
    });
    expect(reports).toContainEqual({
      type: 'mcp',
      server: 'everything',
      message: `connected (${names.length - 1} tools)`,
    });

    expect(await tool(toolset, 'echo').execute({ message: 'hello' }, ctx())).toEqual({
      content: 'Echo: hello',
      isError: false,
    });
    const image = await tool(toolset, 'get-tiny-image').execute({}, ctx());
    expect(image.content).toMatch(/\[image: image\/png, \d+ bytes\]/);
    const env = await tool(toolset, 'get-env').execute({}, ctx());
    expect(env.content).toContain('"GREETING": "hi-there"');
    expect(env.content).not.toContain('sk-ant-not-for-servers');

    const pids = childPids();
    expect(pids.length).toBe(1);
    await toolset.close();
    expect(await waitFor(() => !isRunning(pids[0]!))).toBe(true);
  });

  it('kills the server when the run is aborted', async () => {
    const controller = new AbortController();
    const { toolset } = await open([stdio('everything', process.execPath, [EVERYTHING, 'stdio'])], {
      signal: controller.signal,
    });
    const [pid] = childPids();
    expect(pid && isRunning(pid)).toBe(true);
    controller.abort();
    expect(await waitFor(() => !isRunning(pid!))).toBe(true);
    await toolset.close();
  });
});

describe('MCP over stdio (paged fixture)', () => {
  it('follows nextCursor, renames unusable names and keeps the built-in on a clash (warning both), describes non-text content', async () => {
    const { toolset, reports } = await open([stdio('paged', process.execPath, [PAGED])], {
      tools: ['read_file'],
    });
    try {
      expect(toolset.tools.map((t) => t.spec.name)).toEqual([
        'read_file',
        'bad_name_x',
        'shout',
        'mixed',
        'fails',
        'count',
      ]);
      expect(tool(toolset, 'read_file').spec.description).not.toBe('clashes with the built-in');
      expect(reports).toEqual([
        {
          type: 'mcp',
          server: 'paged',
          message:
            'tool "bad.name/x" offered as "bad_name_x" (providers accept only letters, digits, "_" and "-")',
        },
        {
          type: 'warning',
          message:
            'mcp server "paged": tool "read_file" clashes with a tool already offered; keeping the first one',
        },
        { type: 'mcp', server: 'paged', message: 'connected (5 tools)' },
      ]);
      expect(await tool(toolset, 'bad_name_x').execute({}, ctx())).toEqual({
        content: 'called as bad.name/x',
        isError: false,
      });
      expect(await tool(toolset, 'count').execute({ a: 2, b: 3 }, ctx())).toEqual({
        content: '5',
        isError: false,
      });
      expect(await tool(toolset, 'fails').execute({}, ctx())).toEqual({
        content: 'it went wrong',
        isError: true,
      });
      expect((await tool(toolset, 'mixed').execute({}, ctx())).content).toBe(
        [
          'intro',
          '[image: image/png, 30 bytes]',
          '[audio: audio/wav, 10 bytes]',
          '[resource: file:///a.txt]',
          'resource text',
          '[resource: file:///b.bin, application/octet-stream, 3 bytes]',
          '[resource link: c <file:///c.txt>]',
        ].join('\n'),
      );
    } finally {
      await toolset.close();
    }
  });

  it("leaves no listener on the run's signal per request", async () => {
    // The SDK listens for abort on a request's signal and never stops: given the run's signal, each
    // request left a listener on it for the rest of the run (and Node warned past ten).
    const controller = new AbortController();
    const { toolset } = await open([stdio('paged', process.execPath, [PAGED])], {
      signal: controller.signal,
    });
    try {
      const afterConnect = getEventListeners(controller.signal, 'abort').length;
      expect(afterConnect).toBeLessThanOrEqual(1);
      const context = toolContext(process.cwd(), { signal: controller.signal });
      for (let i = 0; i < 12; i++) {
        expect(await tool(toolset, 'count').execute({ a: i, b: 1 }, context)).toEqual({
          content: String(i + 1),
          isError: false,
        });
      }
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(afterConnect);
    } finally {
      await toolset.close();
    }
  });

  it('ends a server that ignores stdin EOF and SIGTERM', async () => {
    const { toolset } = await open([stdio('stubborn', process.execPath, [PAGED, 'stubborn'])]);
    const [pid] = childPids();
    // The server outlives stdin's end and SIGTERM: that it ends at all shows close() killed it.
    await toolset.close();
    expect(await waitFor(() => !isRunning(pid!))).toBe(true);
  });

  it('connects several servers in parallel', async () => {
    // Each server starts only once all three have been started: connected one after the other,
    // the first would wait for the others for as long as the test process lives, and open() would
    // never end.
    const sandbox = makeSandbox();
    const started = join(sandbox.root, 'started');
    mkdirSync(started);
    const waiting = (name: string) =>
      stdio(name, 'sh', [
        '-c',
        `touch '${started}/${name}'; until [ "$(ls '${started}' | wc -l)" -ge 3 ]; do kill -0 $PPID || exit 1; sleep 0.05; done; '${process.execPath}' '${PAGED}'; exit $?`,
      ]);
    const { toolset, reports } = await open([waiting('one'), waiting('two'), waiting('three')]);
    sandbox.cleanup();
    const connected = reports.filter((r) => r.type === 'mcp' && r.message.startsWith('connected'));
    expect(connected.map((r) => (r.type === 'mcp' ? r.server : ''))).toEqual(['one', 'two', 'three']);
    expect(childPids().length).toBe(3);
    await toolset.close();
    expect(childPids()).toEqual([]);
  });
});

describe('MCP stdio servers behind a wrapper (sh -c, as with npx / uvx)', () => {
  /** Opens the wrapped server and returns the whole process tree: sh and the server under it. */
  async function openWrapped(args: string[], signal?: AbortSignal) {
    const wrapped = shWrapped(PAGED, ...args);
    const { toolset } = await open([stdio('wrapped', wrapped.command, wrapped.args)], {
      ...(signal ? { signal } : {}),
    });
    const [sh] = childPids();
    const tree = [sh!, ...descendantsOf(sh!)];
    expect(tree.length).toBe(2);
    return { toolset, sh: sh!, tree };
  }

  it('close ends the server under the wrapper too, even one that ignores EOF and SIGTERM', async () => {
    const { toolset, tree } = await openWrapped(['stubborn']);
    expect(await tool(toolset, 'count').execute({ a: 1, b: 2 }, ctx())).toEqual({
      content: '3',
      isError: false,
    });
    await toolset.close();
    expect(await waitFor(() => tree.every((pid) => !isRunning(pid)), 1500)).toBe(true);
  });

  it('an abort ends the whole tree', async () => {
    const controller = new AbortController();
    const { toolset, tree } = await openWrapped(['stubborn'], controller.signal);
    controller.abort();
    expect(await waitFor(() => tree.every((pid) => !isRunning(pid)), 1500)).toBe(true);
    await toolset.close();
  });

  it('when the wrapper dies, the server it left behind is ended and calls fail cleanly', async () => {
    const { toolset, sh, tree } = await openWrapped(['stubborn']);
    process.kill(sh, 'SIGKILL');
    expect(await waitFor(() => tree.every((pid) => !isRunning(pid)), 1500)).toBe(true);
    const out = await tool(toolset, 'count').execute({ a: 1, b: 2 }, ctx());
    expect(out.isError).toBe(true);
    await toolset.close();
  });
});
