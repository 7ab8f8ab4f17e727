import { appendFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fsErrorReason } from '../fs/fs-error.js';
import { writeFileAtomic } from '../fs/write-atomic.js';
import type { Usage } from '../provider/types.js';
import type { RunEvent } from '../runner/events.js';
import type { AgentRunResult, RunOutcome } from '../runner/types.js';
import { maskSecrets } from '../secrets.js';
import { type RecordedRequest, RUN_RECORD_VERSION, type RunRecord } from './record.js';
import { newRunId } from './run-id.js';
import { TreeBuilder } from './tree.js';

/**
 * Lines wait this long to be appended together: a 512-way fan-out then opens each transcript a
 * few times instead of once per event, and a killed run loses at most this much of its record.
 */
const FLUSH_EVERY_MS = 50;

/** Said once on stderr when the record cannot be written; the run itself goes on. */
export type RecordProblem = (message: string) => void;

/**
 * Writes one run's record as the run goes: a transcript line per event (text deltas aside: the
 * messages hold the text), appended in batches every 50 ms, and `run.json` at the start and at
 * the end. A record that cannot be written is said once and given up; it never fails the run.
 */
export class RunRecorder {
  /** Transcript file of each agent path, in start order. */
  private readonly files = new Map<string, string>();
  private readonly pending = new Map<string, string[]>();
  private scheduled = false;
  private broken = false;
  private readonly tree = new TreeBuilder();

  private constructor(
    readonly dir: string,
    private readonly record: RunRecord,
    private readonly problem: RecordProblem,
  ) {}

  get id(): string {
    return this.record.id;
  }

  /** Creates the run's directory and `run.json`; undefined (said once) when it cannot. */
  static async open(
    runsDir: string,
    request: RecordedRequest,
    links: Pick<RunRecord, 'resumedFrom' | 'continuedFrom'>,
    problem: RecordProblem,
  ): Promise<RunRecorder | undefined> {
    const startedAt = new Date();
    try {
      await mkdir(runsDir, { recursive: true });
      const id = await newRunDir(runsDir, startedAt);
      const record: RunRecord = {
        version: RUN_RECORD_VERSION,
        id,
        pid: process.pid,
        request,
        startedAt: startedAt.toISOString(),
        status: 'running',
        ...links,
      };
      const recorder = new RunRecorder(join(runsDir, id), record, problem);
      await recorder.writeRunJson();
      return recorder;
    } catch (error) {
      problem(
        `run record: cannot write under ${runsDir} (${fsErrorReason(error)}): this run is not recorded`,
      );
      return undefined;
    }
  }

  /** Feed every event of the run here. */
  readonly observe = (event: RunEvent): void => {
    if (this.broken || event.type === 'text.delta') return;
    let file = this.files.get(event.path);
    if (file === undefined) {
      file = join('agents', `${String(this.files.size).padStart(4, '0')}-${safeName(event.agent)}.jsonl`);
      this.files.set(event.path, file);
    }
    const slash = event.path.lastIndexOf('/');
    const line = slash === -1 ? event : { ...event, parent: event.path.slice(0, slash) };
    this.tree.observe(line, file);
    const lines = this.pending.get(file);
    const text = `${maskSecrets(JSON.stringify(line))}\n`;
    if (lines) lines.push(text);
    else this.pending.set(file, [text]);
    if (!this.scheduled) {
      this.scheduled = true;
      setTimeout(this.flush, FLUSH_EVERY_MS).unref();
    }
  };

  /**
   * Appends what is pending, one write per transcript (synchronous: a few µs each, far cheaper
   * than the promise machinery of async appends); after a failed append the record is given up
   * (said once).
   */
  private readonly flush = (): void => {
    this.scheduled = false;
    if (this.broken) return;
    try {
      for (const [file, lines] of this.pending) appendFileSync(join(this.dir, file), lines.join(''));
    } catch (error) {
      this.giveUp(error);
    }
    this.pending.clear();
  };

  /** Appends every line observed so far (or gives the record up). */
  written(): void {
    this.flush();
  }

  /** The run ended: the last lines, then `run.json` with how it ended and the outcome tree. */
  async finish(outcome: RunOutcome, exitCode: number, endedAt = new Date()): Promise<void> {
    this.written();
    if (this.broken) return;
    const { record } = this;
    const tree = this.tree.roots[0];
    const usage = treeUsage(outcome.result);
    Object.assign(record, {
      endedAt: endedAt.toISOString(),
      durationMs: endedAt.getTime() - Date.parse(record.startedAt),
      status: outcome.result.status,
      exitCode,
      ...(outcome.error ? { error: outcome.error.message } : {}),
      usage: { ...usage, total: usage.inputTokens + usage.outputTokens },
      ...(treeCost(outcome.result) !== undefined ? { cost: treeCost(outcome.result) } : {}),
      ...(tree ? { tree } : {}),
    });
    try {
      await this.writeRunJson();
    } catch (error) {
      this.giveUp(error);
    }
  }

  /**
   * A record is a log of the run, not the user's data: replaced whole (a crashed process leaves
   * the old or the new), but not flushed to disk, which costs a one-turn run several ms.
   */
  private async writeRunJson(): Promise<void> {
    const text = `${maskSecrets(JSON.stringify(this.record, null, 2))}\n`;
    await writeFileAtomic(join(this.dir, 'run.json'), text, { durable: false });
  }

  private giveUp(error: unknown): void {
    if (this.broken) return;
    this.broken = true;
    this.problem(
      `run record: cannot write ${this.dir} (${fsErrorReason(error)}): the record of this run is incomplete`,
    );
  }
}

/** A new directory `<runsDir>/<run-id>`, created exclusively; its id. */
async function newRunDir(runsDir: string, startedAt: Date): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const id = newRunId(startedAt);
    try {
      await mkdir(join(runsDir, id));
      await mkdir(join(runsDir, id, 'agents'));
      return id;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 8) throw error;
    }
  }
}

/** An agent name as part of a file name. */
function safeName(agent: string): string {
  return agent.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 64) || 'agent';
}

function treeUsage(result: AgentRunResult): Usage {
  return result.children.reduce((sum, child) => {
    const u = treeUsage(child);
    return {
      inputTokens: sum.inputTokens + u.inputTokens,
      outputTokens: sum.outputTokens + u.outputTokens,
      cacheReadTokens: sum.cacheReadTokens + u.cacheReadTokens,
      cacheWriteTokens: sum.cacheWriteTokens + u.cacheWriteTokens,
    };
  }, result.usage);
}

function treeCost(result: AgentRunResult): number | undefined {
  const costs = [result.cost, ...result.children.map(treeCost)].filter((c): c is number => c !== undefined);
  return costs.length === 0 ? undefined : costs.reduce((a, b) => a + b, 0);
}
