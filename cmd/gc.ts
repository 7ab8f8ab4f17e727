import { locateAgent } from '../internal/agent/agent-files.js';
import { listAgents, loadAgentFile } from '../internal/agent/load.js';
import type { AgentSpec } from '../internal/agent/spec.js';
import { agentLookup } from '../internal/config/paths.js';
import { errorMessage, RuntimeError } from '../internal/errors.js';
import {
  analyseMemory,
  entriesKept,
  type GcAnalysis,
  readAgentMemory,
  trimAgentMemory,
} from '../internal/gc/gc.js';
import { createRunRenderer } from '../internal/output/run-renderer.js';
import { maskSecrets } from '../internal/secrets.js';
import { agentsDirFlags, lastValue } from './argv.js';
import { stderr, stdout } from './stdio.js';

/** `axe gc [agent] [--all] [--dry-run] [--model]`: Go axe's memory analysis and trim. */
export async function gcCommand(
  agent: string | undefined,
  options: Record<string, unknown>,
): Promise<number> {
  const all = options.all === true;
  if (all && agent !== undefined) throw new RuntimeError('cannot specify both --all and an agent name');
  if (!all && agent === undefined) throw new RuntimeError('agent name is required (or use --all)');
  const argv = process.argv.slice(2);
  const gc: Omit<GcAnalysis, 'emit'> = {
    ...agentLookup(agentsDirFlags(options), process.env, process.cwd()),
    env: process.env,
    model: lastValue(argv, options.model, ['--model']),
    record: lastValue(argv, options.record, ['--record']),
    replay: lastValue(argv, options.replay, ['--replay']),
  };
  const dryRun = options.dryRun === true;
  if (agent !== undefined) {
    const file = await locateAgent(agent, gc.searchDirs, process.cwd());
    await gcAgent(await loadAgentFile(file, process.env), gc, dryRun);
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
      await gcAgent(spec, gc, dryRun);
    } catch (error) {
      stderr.write(`Error: gc failed for agent "${spec.name}": ${maskSecrets(errorMessage(error))}\n`);
      failed++;
    }
  }
  if (failed > 0)
    throw new RuntimeError(`gc completed with errors: ${failed} of ${keeping.length} agents failed`);
  return 0;
}

/** One agent's gc, said as Go axe says it. */
async function gcAgent(spec: AgentSpec, gc: Omit<GcAnalysis, 'emit'>, dryRun: boolean): Promise<void> {
  const name = spec.name;
  if (!spec.memory.enabled) {
    stderr.write(`Warning: agent "${name}" does not have memory enabled. Skipping.\n`);
    return;
  }
  const { file, log, count } = await readAgentMemory(spec, gc.env);
  if (log === '') {
    stdout.write(`No memory entries for agent "${name}". Nothing to do.\n`);
    return;
  }
  stdout.write(`Agent: ${name}\nEntries: ${count}\n`);
  const report = await analyseMemory(spec, log, { ...gc, emit: analysisRenderer().emit });
  stdout.write(`--- Analysis ---\n${maskSecrets(report)}\n`);
  if (dryRun) {
    stdout.write('Dry run: no entries trimmed.\n');
    return;
  }
  const keep = entriesKept(spec);
  if (keep === 0) {
    stdout.write('No trim target configured (last_n and max_entries are both 0). Skipping trim.\n');
    return;
  }
  const removed = await trimAgentMemory(file, keep);
  stdout.write(
    removed === 0
      ? `No trimming needed: ${count} entries within limit (${keep}).\n`
      : `Trimmed: ${removed} entries removed, ${keep} entries kept.\n`,
  );
}

/** What the analysis run says on the way (a warning, a retry): as a quiet `axe run` says it. */
function analysisRenderer() {
  return createRunRenderer({ json: false, verbose: false, stream: false, stdout, stderr });
}
