import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import type { JsonEnvelope, JsonToolCallDetail } from '../../internal/output/json-envelope.js';
import { startFakeLlm } from '../fake-llm/server.js';
import type { FakeLlm, RecordedRequest, ScriptedReply } from '../fake-llm/types.js';
import { AXE_BIN, TempHome } from '../run/cli.js';

/**
 * End-to-end plumbing for the tool tests: the built `axe` binary, a temp XDG home with an agent
 * file, and the fake LLM server scripting the tool calls. `useE2e()` registers the hooks of one
 * test file and returns its `setup()`.
 */
export function useE2e(): () => Promise<{ home: TempHome; fake: FakeLlm; workdir: string }> {
  const homes: TempHome[] = [];
  const servers: FakeLlm[] = [];
  beforeAll(() => {
    if (!existsSync(AXE_BIN)) throw new Error(`${AXE_BIN} is missing: run \`npm run build\` first`);
  });
  afterAll(async () => {
    await Promise.all(servers.map((fake) => fake.close()));
    for (const home of homes) home.cleanup();
  });
  return async () => {
    const home = new TempHome();
    const fake = await startFakeLlm();
    homes.push(home);
    servers.push(fake);
    const workdir = join(home.root, 'work');
    mkdirSync(workdir);
    return { home, fake, workdir };
  };
}

/** Replies in order: one per model turn, whatever the request. */
export function script(...turns: ScriptedReply[]): (request: RecordedRequest) => ScriptedReply {
  let turn = 0;
  return () => turns[Math.min(turn++, turns.length - 1)]!;
}

/** An agent file (TOML) of agent `worker` on the fake Anthropic model. */
export function agentToml(workdir: string, tools: string[], extra = ''): string {
  return [
    'name = "worker"',
    'model = "anthropic/claude-test"',
    'system_prompt = "ROLE:worker"',
    `workdir = "${workdir}"`,
    `tools = [${tools.map((t) => `"${t}"`).join(', ')}]`,
    extra,
  ].join('\n');
}

/** The `--json` envelope's `tool_call_details`. */
export function toolCallDetails(stdout: string): JsonToolCallDetail[] {
  return (JSON.parse(stdout) as JsonEnvelope).tool_call_details;
}
