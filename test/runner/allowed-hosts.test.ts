import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startFakeLlm } from '../fake-llm/index.js';
import type { FakeLlm } from '../fake-llm/types.js';
import { agentOf, callAgent, type Home, makeHome } from './harness.js';

let llm: FakeLlm;
let home: Home;
let page: http.Server;
let pageUrl: string;
let hits = 0;

beforeAll(async () => {
  llm = await startFakeLlm();
  home = makeHome(llm);
  page = http.createServer((_req, res) => {
    hits++;
    res.end('the page');
  });
  await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
  pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await llm.close();
  page.closeAllConnections();
  await new Promise((resolve) => page.close(resolve));
  home.remove();
});

it('a sub-agent that sets no allowed_hosts inherits its parent’s; one that sets its own uses it', async () => {
  home.agent('boss', 'allowed_hosts = ["only.example"]\nsub_agents = ["inheritor", "owner"]');
  home.agent('inheritor', 'tools = ["url_fetch"]');
  home.agent('owner', 'tools = ["url_fetch"]\nallowed_hosts = ["127.0.0.1"]');
  llm.respond((request) => {
    const me = agentOf(request);
    if (me === 'boss') {
      if (request.toolResults.length === 0) {
        return {
          toolCalls: [...(callAgent('inheritor', 'fetch') ?? []), ...(callAgent('owner', 'fetch') ?? [])],
        };
      }
      return { text: request.toolResults.map((r) => r.content).join(' | ') };
    }
    if (request.toolResults.length === 0) {
      return { toolCalls: [{ name: 'url_fetch', arguments: { url: pageUrl } }] };
    }
    const result = request.toolResults[0];
    return { text: `${me}:${result?.isError ? 'refused' : 'fetched'}:${result?.content}` };
  });
  const { outcome } = await home.run('boss', { env: { ...home.env, AXE_ALLOW_PRIVATE_HOSTS: '1' } });
  expect(outcome.error).toBeUndefined();
  expect(outcome.result.content).toMatch(
    /^inheritor:refused:.*not in allowed_hosts.* \| owner:fetched:.*the page/,
  );
  expect(hits).toBe(1);
});
