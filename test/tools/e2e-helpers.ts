import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { JsonEnvelope, JsonToolCallDetail } from '../../internal/output/json-envelope.js';
import type { FakeLlm, RecordedRequest, ScriptedReply } from '../fake-llm/types.js';
import { e2eHomes, type TempHome } from '../run/cli.js';

/**
 * End-to-end plumbing for the tool tests: the built `axe` binary, a temp XDG home with an agent
 * file, and the fake LLM server scripting the tool calls. `useE2e()` registers the hooks of one
 * test file and returns its `setup()`.
 */
export function useE2e(): () => Promise<{ home: TempHome; fake: FakeLlm; workdir: string }> {
  const setup = e2eHomes();
  return async () => {
    const { home, fake } = await setup();
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
