import { locateAgent } from '../internal/agent/agent-files.js';
import { listAgents, loadAgentFile } from '../internal/agent/load.js';
import type { AgentSpec } from '../internal/agent/spec.js';
import { loadGlobalConfig } from '../internal/config/global.js';
import { agentLookup } from '../internal/config/paths.js';
import { AxeError, ExitCode, errorMessage, MissingKeyError, RuntimeError } from '../internal/errors.js';
import { fileProblem } from '../internal/fs/fs-error.js';
import { countEntries, memoryFile, readMemory, trimEntries } from '../internal/memory/memory.js';
import { createRunRenderer } from '../internal/output/run-renderer.js';
import { runTopLevel } from '../internal/runner/index.js';
import { maskSecrets } from '../internal/secrets.js';
import { agentsDirFlags, lastValue } from './argv.js';
import { stderr, stdout } from './stdio.js';

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

interface GcOptions {
  searchDirs: string[];
  configDir: string;
  dryRun: boolean;
  model: string | undefined;
  record: string | undefined;
  replay: string | undefined;
}

/** `axe gc [agent] [--all] [--dry-run] [--model]`: Go axe's memory analysis and trim. */
export async function gcCommand(
  agent: string | undefined,
  options: Record<string, unknown>,
): Promise<number> {
  const all = options.all === true;
  if (all && agent !== undefined) throw new RuntimeError('cannot specify both --all and an agent name');
  if (!all && agent === undefined) throw new RuntimeError('agent name is required (or use --all)');
  const argv = process.argv.slice(2);
  const gc: GcOptions = {
    ...agentLookup(agentsDirFlags(options), process.env, process.cwd()),
    dryRun: options.dryRun === true,
    model: lastValue(argv, options.model, ['--model']),
    record: lastValue(argv, options.record, ['--record']),
    replay: lastValue(argv, options.replay, ['--replay']),
  };
  if (agent !== undefined) {
    const file = await locateAgent(agent, gc.searchDirs, process.cwd());
    await gcAgent(await loadAgentFile(file, process.env), gc);
    return 0;
  }
  const { agents } = await listAgents(gc.searchDirs, process.env);
  const keeping = agents.filter((spec) => spec.memory.enabled);
  if (keeping.length === 0) {
    stdout.write('No agents with memory enabled.\n');
    return 0;
  }
  let failed = 0;
  for (const spec of keeping) {
    stdout.write(`=== GC: ${spec.name} ===\n`);
    try {
      await gcAgent(spec, gc);
    } catch (error) {
      stderr.write(`Error: gc failed for agent "${spec.name}": ${maskSecrets(errorMessage(error))}\n`);
      failed++;
    }
  }
  if (failed > 0)
    throw new RuntimeError(`gc completed with errors: ${failed} of ${keeping.length} agents failed`);
  return 0;
}

async function gcAgent(spec: AgentSpec, gc: GcOptions): Promise<void> {
  const name = spec.name;
  if (!spec.memory.enabled) {
    stderr.write(`Warning: agent "${name}" does not have memory enabled. Skipping.\n`);
    return;
  }
  const file = memoryFile(name, spec.memory, process.env);
  let log: string;
  try {
    log = await readMemory(file);
  } catch (error) {
    throw new RuntimeError(`cannot read memory: ${fileProblem(file, error)}`);
  }
  if (log === '') {
    stdout.write(`No memory entries for agent "${name}". Nothing to do.\n`);
    return;
  }
  const count = countEntries(log);
  stdout.write(`Agent: ${name}\nEntries: ${count}\n`);
  stdout.write(`--- Analysis ---\n${maskSecrets(await analyse(spec, log, gc))}\n`);
  if (gc.dryRun) {
    stdout.write('Dry run: no entries trimmed.\n');
    return;
  }
  const keep = spec.memory.lastN > 0 ? spec.memory.lastN : spec.memory.maxEntries;
  if (keep === 0) {
    stdout.write('No trim target configured (last_n and max_entries are both 0). Skipping trim.\n');
    return;
  }
  const removed = await trimEntries(file, keep).catch((error: unknown) => {
    throw new RuntimeError(`cannot trim memory: ${fileProblem(file, error)}`);
  });
  stdout.write(
    removed === 0
      ? `No trimming needed: ${count} entries within limit (${keep}).\n`
      : `Trimmed: ${removed} entries removed, ${keep} entries kept.\n`,
  );
}

/**
 * The one model call, run as an agent of its own through the same runner as `axe run` (providers,
 * retries, cassettes, secrets): the agent's model, Go's prompt, no tools, no memory of its own.
 */
async function analyse(spec: AgentSpec, log: string, gc: GcOptions): Promise<string> {
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
  const renderer = createRunRenderer({
    json: false,
    verbose: false,
    stream: false,
    stdout,
    stderr,
  });
  const outcome = await runTopLevel({
    spec: analyst,
    input: log,
    env: process.env,
    searchDirs: gc.searchDirs,
    configDir: gc.configDir,
    globalConfig: () => loadGlobalConfig(gc.configDir),
    ...(gc.model !== undefined ? { modelOverride: gc.model } : {}),
    timeoutSeconds: GC_TIMEOUT_SECONDS,
    stream: false,
    ...(gc.record !== undefined ? { record: gc.record } : {}),
    ...(gc.replay !== undefined ? { replay: gc.replay } : {}),
    signal: new AbortController().signal,
    emit: renderer.emit,
  });
  // Go axe's gc refuses a missing key as a provider failure (exit 3), where `run` says 2.
  if (outcome.error instanceof MissingKeyError) {
    throw new AxeError(outcome.error.message, ExitCode.provider, { cause: outcome.error });
  }
  if (outcome.error) throw outcome.error;
  return outcome.result.content;
}
