import { loadGlobalConfig } from '../internal/config/global.js';
import { resolvePaths } from '../internal/config/paths.js';
import { ConfigError, errorMessage } from '../internal/errors.js';
import { treeDollars } from '../internal/output/dollars.js';
import { renderRunList, renderRunTree, renderTranscript, runRow } from '../internal/output/runs-view.js';
import { type Pricer, pricing } from '../internal/prices/index.js';
import {
  findRun,
  loadRun,
  readRunRecord,
  removeRun,
  runIds,
  runsDir,
  shownStatus,
} from '../internal/record/store.js';
import { maskSecrets } from '../internal/secrets.js';
import { stderr, stdout } from './stdio.js';

/** `axe runs list | show <id> | rm <id>`: the records runs leave under `<data dir>/runs`. */
export async function runsCommand(
  action: string,
  ref: string | undefined,
  options: Record<string, unknown>,
): Promise<number> {
  const dir = runsDir(process.env);
  if (action === 'list') return list(dir, options);
  if (action !== 'show' && action !== 'rm') {
    throw new ConfigError(`unknown runs action "${action}": expected list, show or rm`);
  }
  if (ref === undefined) {
    throw new ConfigError(`missing <run> for "runs ${action}": a run id, a unique prefix of one, or last`);
  }
  const id = await findRun(dir, ref);
  if (action === 'rm') {
    await removeRun(dir, id);
    return 0;
  }
  const run = await loadRun(dir, id);
  const price = await runsPricer();
  const transcript = options.transcript;
  if (typeof transcript === 'string') {
    const agent = run.agents.find((a) => a.path === transcript);
    if (!agent) {
      const paths = run.agents.map((a) => a.path).join(', ');
      throw new ConfigError(`--transcript: run ${id} has no agent "${transcript}" (its agents: ${paths})`);
    }
    stdout.write(renderTranscript(run.transcripts.get(agent.transcript) ?? []));
  } else if (options.html === true) {
    const { renderHtmlTrace } = await import('../internal/record/html-trace.js');
    stdout.write(maskSecrets(renderHtmlTrace(run)));
  } else if (options.json === true) {
    const { record } = run;
    const dollars = run.tree ? treeDollars(run.tree, price) : undefined;
    const json = {
      ...record,
      status: shownStatus(record),
      ...(dollars ? { cost_usd: dollars.usd, cost_usd_without_cache: dollars.usdWithoutCache } : {}),
      tree: run.tree,
    };
    stdout.write(`${maskSecrets(JSON.stringify(json))}\n`);
  } else {
    stdout.write(renderRunTree(run, price));
  }
  return 0;
}

async function list(dir: string, options: Record<string, unknown>): Promise<number> {
  const rows = [];
  const price = await runsPricer();
  for (const id of await runIds(dir)) {
    try {
      const run = await readRunRecord(dir, id);
      rows.push(runRow(run, price));
    } catch (error) {
      stderr.write(`Warning: skipped ${errorMessage(error)}\n`);
    }
  }
  stdout.write(options.json === true ? `${JSON.stringify(rows)}\n` : renderRunList(rows));
  return 0;
}

/**
 * The prices `axe runs` shows a run's dollars at, from its recorded tokens and models: today's
 * `[prices]` over the price table (a run records tokens, not prices, so that a run that asked for
 * no dollars never loads the table). A config.toml that cannot be read: the table's.
 */
async function runsPricer(): Promise<Pricer> {
  const env = process.env;
  const config = await loadGlobalConfig(resolvePaths(env).configDir).catch(() => undefined);
  return pricing(config, env);
}
