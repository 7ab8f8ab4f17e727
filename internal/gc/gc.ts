import type { AgentSpec } from '../agent/spec.js';
import { loadGlobalConfig } from '../config/global.js';
import { AxeError, ExitCode, MissingKeyError, RuntimeError } from '../errors.js';
import { fileProblem } from '../fs/fs-error.js';
import { countEntries, memoryFile, readMemory, trimEntries } from '../memory/memory.js';
import { type EmitEvent, runTopLevel } from '../runner/index.js';

/**
 * Go axe's `gc`, without its printing: an agent's memory read, analysed by the agent's model, then
 * trimmed to the agent's limit. Kept apart from internal/memory, which the runner reads: this
 * runs the runner, and a folder the runner imports must not import it back.
 */

/** Go axe's pattern-detection prompt, word for word. */
const GC_PATTERN_PROMPT = `You are a memory analyst for an AI agent. You will receive a log of the agent's past tasks and results. Analyze the entries and provide a structured report.

Your report MUST contain exactly these three sections with these exact headings:

## Patterns Found
Identify recurring themes, common task types, or behavioral patterns across the entries. If no patterns exist, state "No clear patterns detected."

## Repeated Work
Identify any tasks that appear to be duplicated or that the agent has done multiple times with the same or similar inputs. If no repetition is found, state "No repeated work detected."

## Recommendations
Based on the patterns and repetitions found, suggest concrete actions the user could take to improve the agent's configuration, skill, or workflow. If no recommendations apply, state "No specific recommendations."

Be concise. Reference specific entries by their timestamps when relevant.`;

/** Go's gc call: 0.3, 4096 tokens, 120 s, no tools. */
const GC_TIMEOUT_SECONDS = 120;

/** Where the analysis runs: the agent lookup, the model override, the cassette, the run's events. */
export interface GcAnalysis {
  searchDirs: string[];
  configDir: string;
  env: NodeJS.ProcessEnv;
  model?: string | undefined;
  record?: string | undefined;
  replay?: string | undefined;
  /** Receives the analysis run's events (its warnings, its retries), as `axe run`'s renderer does. */
  emit: EmitEvent;
  signal?: AbortSignal;
}

/** An agent's memory file and what it holds; `count` is its number of entries. */
export interface AgentMemory {
  file: string;
  log: string;
  count: number;
}

export async function readAgentMemory(spec: AgentSpec, env: NodeJS.ProcessEnv): Promise<AgentMemory> {
  const file = memoryFile(spec.name, spec.memory, env);
  let log: string;
  try {
    log = await readMemory(file);
  } catch (error) {
    throw new RuntimeError(`cannot read memory: ${fileProblem(file, error)}`);
  }
  return { file, log, count: log === '' ? 0 : countEntries(log) };
}

/** How many entries gc keeps: `last_n`, else `max_entries`; 0 when neither is set (no trim). */
export function entriesKept(spec: AgentSpec): number {
  return spec.memory.lastN > 0 ? spec.memory.lastN : spec.memory.maxEntries;
}

/** The oldest entries beyond `keep` removed; how many were. */
export async function trimAgentMemory(file: string, keep: number): Promise<number> {
  return trimEntries(file, keep).catch((error: unknown) => {
    throw new RuntimeError(`cannot trim memory: ${fileProblem(file, error)}`);
  });
}

/**
 * The one model call, run as an agent of its own through the same runner as `axe run` (providers,
 * retries, cassettes, secrets): the agent's model, Go's prompt, no tools, no memory of its own.
 * Returns the model's report.
 */
export async function analyseMemory(spec: AgentSpec, log: string, gc: GcAnalysis): Promise<string> {
  const analyst: AgentSpec = {
    ...spec,
    systemPrompt: GC_PATTERN_PROMPT,
    files: [],
    tools: [],
    mcpServers: [],
    subAgents: [],
    stream: false,
    memory: { ...spec.memory, enabled: false },
    params: { temperature: 0.3, maxTokens: 4096 },
  };
  delete analyst.skill;
  delete analyst.workdir; // the analysis reads no files: an agent's workdir need not exist here
  const outcome = await runTopLevel({
    spec: analyst,
    input: log,
    env: gc.env,
    searchDirs: gc.searchDirs,
    configDir: gc.configDir,
    globalConfig: () => loadGlobalConfig(gc.configDir),
    ...(gc.model !== undefined ? { modelOverride: gc.model } : {}),
    timeoutSeconds: GC_TIMEOUT_SECONDS,
    stream: false,
    ...(gc.record !== undefined ? { record: gc.record } : {}),
    ...(gc.replay !== undefined ? { replay: gc.replay } : {}),
    signal: gc.signal ?? new AbortController().signal,
    emit: gc.emit,
  });
  // Go axe's gc refuses a missing key as a provider failure (exit 3), where `run` says 2.
  if (outcome.error instanceof MissingKeyError) {
    throw new AxeError(outcome.error.message, ExitCode.provider, { cause: outcome.error });
  }
  if (outcome.error) throw outcome.error;
  return outcome.result.content;
}
