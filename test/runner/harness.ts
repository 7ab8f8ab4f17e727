import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { loadAgent } from '../../internal/agent/load.js';
import { loadGlobalConfig } from '../../internal/config/global.js';
import type { RunEvent } from '../../internal/runner/events.js';
import { runTopLevel } from '../../internal/runner/top-level.js';
import type { RunOutcome, RunRequest } from '../../internal/runner/types.js';
import { startFakeLlm } from '../fake-llm/index.js';
import type { FakeLlm, RecordedRequest, ScriptedReply } from '../fake-llm/types.js';

/** A temp home with an agents dir and a config dir, agents that talk to one fake LLM server. */
export interface Home {
  root: string;
  agentsDir: string;
  configDir: string;
  env: NodeJS.ProcessEnv;
  /** Writes `<agents>/<name>.toml`: `system_prompt = "agent:<name>"` plus `body`. */
  agent(name: string, body?: string): void;
  run(name: string, options?: Partial<RunRequest>): Promise<{ outcome: RunOutcome; events: RunEvent[] }>;
  remove(): void;
}

export function makeHome(llm: FakeLlm): Home {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'axe-runner-')));
  const agentsDir = path.join(root, 'agents');
  const configDir = path.join(root, 'config');
  fs.mkdirSync(agentsDir);
  fs.mkdirSync(configDir);
  const env: NodeJS.ProcessEnv = { ANTHROPIC_API_KEY: 'test-key', AXE_ANTHROPIC_BASE_URL: llm.url };
  return {
    root,
    agentsDir,
    configDir,
    env,
    agent(name, body = '') {
      const toml = `name = "${name}"\nmodel = "anthropic/claude-test"\nsystem_prompt = "agent:${name}"\nworkdir = "${root}"\n${body}\n`;
      fs.writeFileSync(path.join(agentsDir, `${name}.toml`), toml);
    },
    async run(name, options = {}) {
      const requestEnv = options.env ?? env;
      const spec = await loadAgent(name, { searchDirs: [agentsDir], env: requestEnv });
      const events: RunEvent[] = [];
      const outcome = await runTopLevel({
        spec,
        input: 'go',
        env: requestEnv,
        searchDirs: [agentsDir],
        configDir,
        globalConfig: () => loadGlobalConfig(configDir),
        timeoutSeconds: 20,
        stream: false,
        signal: new AbortController().signal,
        emit: (event) => events.push(event),
        ...options,
      });
      return { outcome, events };
    },
    remove() {
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The agent a request came from (its system prompt starts with `agent:<name>`). */
export function agentOf(request: RecordedRequest): string {
  return /^agent:([\w-]+)/.exec(request.system)?.[1] ?? '?';
}

export function callAgent(agent: string, task: string, context?: string): ScriptedReply['toolCalls'] {
  return [{ name: 'call_agent', arguments: { agent, task, ...(context !== undefined ? { context } : {}) } }];
}

export function requestsOf(llm: FakeLlm, agent: string): RecordedRequest[] {
  return llm.requests.filter((request) => agentOf(request) === agent);
}

/** Whether the request body has a `tools` key at all. */
export function hasToolsKey(request: RecordedRequest): boolean {
  return typeof request.body === 'object' && request.body !== null && 'tools' in request.body;
}

/**
 * One fake server and one home for a test file: started before its tests, reset before each,
 * removed after. Read `llm` and `home` inside tests (they are set in beforeAll).
 */
export function useHome(): { llm: FakeLlm; home: Home } {
  const holder = {} as { llm: FakeLlm; home: Home };
  beforeAll(async () => {
    holder.llm = await startFakeLlm();
    holder.home = makeHome(holder.llm);
  });
  afterAll(async () => {
    await holder.llm.close();
    holder.home.remove();
  });
  beforeEach(() => holder.llm.reset());
  return holder;
}
