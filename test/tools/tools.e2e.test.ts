import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startFakeTavily } from '../fake-tavily/server.js';
import { runAxe } from '../run/cli.js';
import { startCountingServer } from './counting-server.js';
import { agentToml as agent, script, toolCallDetails, useE2e } from './e2e-helpers.js';

/**
 * Built-in tools end to end: the built `axe` binary, an agent file, the fake LLM server scripting
 * the tool calls, and the results checked where the model receives them.
 */
const setup = useE2e();

describe.concurrent('tools through axe run', () => {
  it('file tools and run_command: results reach the model unchanged; --json and --verbose report them', async () => {
    const { home, fake, workdir } = await setup();
    writeFileSync(join(workdir, 'notes.txt'), 'alpha\nbeta\n');
    home.agent(
      'worker',
      agent(workdir, ['read_file', 'write_file', 'edit_file', 'list_directory', 'run_command']),
    );
    const long = 'printf "%03000d" 0';
    fake.respond(
      script(
        { toolCalls: [{ name: 'write_file', arguments: { path: 'out/result.txt', content: 'hello' } }] },
        {
          toolCalls: [
            { name: 'read_file', arguments: { path: 'notes.txt', offset: 2 } },
            {
              name: 'edit_file',
              arguments: { path: 'out/result.txt', old_string: 'hello', new_string: 'bye' },
            },
            { name: 'run_command', arguments: { command: 'echo "$ANTHROPIC_API_KEY"; exit 4' } },
            { name: 'read_file', arguments: { path: '../outside.txt' } },
          ],
        },
        {
          toolCalls: [
            { name: 'list_directory', arguments: { path: '.' } },
            { name: 'run_command', arguments: { command: long } },
          ],
        },
        { text: 'all done' },
      ),
    );
    const result = await runAxe(
      ['run', 'worker', '--agents-dir', home.agentsDir, '-p', 'go', '--json', '--verbose'],
      { env: home.env(fake.url) },
    );
    expect(result.code).toBe(0);
    expect(fake.rejections).toEqual([]);
    const [, second, third, fourth] = fake.requests;
    expect(second?.toolResults.slice(-1)).toEqual([
      expect.objectContaining({ content: 'wrote 5 bytes to out/result.txt', isError: false }),
    ]);
    const escaped = `path "../outside.txt" escapes the workdir (${workdir})`;
    expect(third?.toolResults.slice(-4).map((r) => [r.content, r.isError])).toEqual([
      ['2: beta', false],
      ['replaced 1 occurrence in out/result.txt', false],
      ['exit code 4\n\n', true],
      [escaped, true],
    ]);
    expect(fourth?.toolResults.slice(-2).map((r) => r.content)).toEqual([
      'notes.txt\nout/',
      '0'.repeat(3000),
    ]);
    expect(readFileSync(join(workdir, 'out/result.txt'), 'utf8')).toBe('bye');

    const details = toolCallDetails(result.stdout);
    const firstTurn = details[0]?.turn ?? 0;
    expect(details.map((d) => [d.name, d.is_error, d.turn - firstTurn])).toEqual([
      ['write_file', false, 0],
      ['read_file', false, 1],
      ['edit_file', false, 1],
      ['run_command', true, 1],
      ['read_file', true, 1],
      ['list_directory', false, 2],
      ['run_command', false, 2],
    ]);
    expect(details[1]).toMatchObject({ input: { path: 'notes.txt', offset: 2 }, output: '2: beta' });
    expect(details[6]).toMatchObject({
      input: { command: long },
      output: `${'0'.repeat(1024)}... (truncated)`,
    });
    expect(details.every((d) => Number.isInteger(d.duration_ms) && d.duration_ms >= 0)).toBe(true);

    // Parallel calls of one turn finish in any order: compare the [tool] lines as a set.
    const toolLines = result.stderr.split('\n').filter((line) => line.startsWith('[tool]'));
    expect(toolLines.sort()).toEqual(
      [
        '[tool] write_file: path "out/result.txt" (5 bytes) (success)',
        '[tool] read_file: path "notes.txt" (1 lines) (success)',
        '[tool] edit_file: path "out/result.txt" (replaced 1 occurrence in out/result.txt) (success)',
        '[tool] run_command: "echo \\"$ANTHROPIC_API_KEY\\"; exit 4" (exit 4) (error)',
        `[tool] read_file: path "../outside.txt": ${escaped} (error)`,
        '[tool] list_directory: path "." (success)',
        `[tool] run_command: ${JSON.stringify(long)} (exit 0) (success)`,
      ].sort(),
    );
    expect(result.stderr).not.toContain('test-key');
  });

  it('url_fetch and web_search: results reach the model; allowed_hosts is enforced', async () => {
    const { home, fake, workdir } = await setup();
    const tavily = await startFakeTavily('tvly-e2e');
    const page = await startCountingServer((_req, res) => {
      res.setHeader('content-type', 'text/html');
      res.end('<p>Hello <b>page</b></p>');
    });
    try {
      home.agent('worker', agent(workdir, ['url_fetch', 'web_search'], 'allowed_hosts = ["127.0.0.1"]'));
      fake.respond(
        script(
          {
            toolCalls: [
              { name: 'url_fetch', arguments: { url: `${page.url}/?token=s3cr3t` } },
              { name: 'url_fetch', arguments: { url: `http://localhost:${page.port}/` } },
              { name: 'web_search', arguments: { query: 'axe', max_results: 1 } },
            ],
          },
          { text: 'ok' },
        ),
      );
      const env = home.env(fake.url, {
        AXE_ALLOW_PRIVATE_HOSTS: '1',
        TAVILY_API_KEY: 'tvly-e2e',
        AXE_TAVILY_BASE_URL: tavily.url,
      });
      const result = await runAxe(['run', 'worker', '--agents-dir', home.agentsDir, '-p', 'go', '-v'], {
        env,
      });
      expect(result.code).toBe(0);
      const refused = `url_fetch refused http://localhost:${page.port}/: host "localhost" is not in allowed_hosts`;
      expect(fake.requests[1]?.toolResults.map((r) => [r.content, r.isError])).toEqual([
        ['Hello page', false],
        [refused, true],
        ['Title: Result 1 for axe\nURL: https://example.com/1\nSnippet: Snippet 1\n  about axe.', false],
      ]);
      expect(page.connections()).toBe(1);
      const toolLines = result.stderr.split('\n').filter((line) => line.startsWith('[tool]'));
      expect(toolLines.sort()).toEqual(
        [
          `[tool] url_fetch: url "${page.url}/" (10 chars) (success)`,
          `[tool] url_fetch: url "http://localhost:${page.port}/": ${refused} (error)`,
          '[tool] web_search: query "axe" (success)',
        ].sort(),
      );
      expect(result.stderr).not.toContain('s3cr3t');
    } finally {
      await Promise.all([tavily.close(), page.close()]);
    }
  });
});
