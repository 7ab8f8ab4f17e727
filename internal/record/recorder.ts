import { appendFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fsErrorReason } from '../fs/fs-error.js';
import { sharedDirWarning } from '../fs/private-dir.js';
import { replaceFileSync } from '../fs/replace-file.js';
import { ownIdentity } from '../process-alive.js';
import { splitPath } from '../runner/agent-path.js';
import type { RunEvent } from '../runner/events.js';
import { treeCost, treeUsage } from '../runner/result.js';
import type { RunOutcome } from '../runner/types.js';
import { maskSecrets } from '../secrets.js';
import { isoTime } from '../time.js';
import {
  ENDED_FILE,
  OUTPUT_INLINE_MAX,
  type OutputRef,
  RESERVE_FILE,
  RESERVED_BYTES,
  type RecordedRequest,
  RUN_JSON_MAX,
  RUN_RECORD_VERSION,
  type RunEnding,
  type RunRecord,
} from './record.js';
import { newRunId } from './run-id.js';
import { TreeBuilder } from './tree.js';

/**
 * Lines are made and appended together once the run's events pause this long: a 512-way fan-out
 * then opens each transcript a few times instead of once per event, and a burst of events (a
 * fan-out starting its children, their answers coming back) is slowed neither by writes nor by
 * JSON in its midst.
 */
const FLUSH_QUIET_MS = 50;
/** Nor later than this after the first of them: a killed run loses at most this much of its record. */
const FLUSH_WITHIN_MS = 500;

/** How the run's end is written: synchronously (the process may exit right after), and synced. */
const DURABLE = { durable: true };

/** Of the run's error, what `ended.json` keeps: it stays within the space kept for it. */
const ENDED_ERROR_MAX = 1024;

/** The run a run resumed or continued. */
type RunLinks = Pick<RunRecord, 'resumedFrom' | 'continuedFrom' | 'batch'>;

/**
 * A record holds whole conversations, piped input and the files tools read: its directories are
 * the user's only (the runs directory too: nobody else needs to see when axe ran), and so are its files.
 */
const DIR_MODE = 0o700;
const FILE_MODE = 0o600;

/** Said once on stderr when the record cannot be written; the run itself goes on. */
export type RecordProblem = (message: string) => void;

/**
 * Writes one run's record as the run goes: a transcript line per event (text deltas aside: the
 * messages hold the text), made and appended in batches when the events pause (within 500 ms;
 * an event is never changed once emitted), and `run.json` at the start and at the end. A record
 * that cannot be written is said once and given up; it never fails the run.
 */
export class RunRecorder {
  /**
   * Recorders with lines still waiting: appended when the process exits, whichever way it does (a
   * second Ctrl-C, a reader of stdout that went away), as the flush timer never holds it open.
   */
  private static readonly unwritten = new Set<RunRecorder>();
  private static exitHooked = false;

  /** Tool outputs written to `outputs/` whose tool message is still to come, by agent path and call id. */
  private readonly outputs = new Map<string, { output: string; ref: OutputRef }>();
  private outputCount = 0;
  /** Transcript file of each agent path, in start order. */
  private readonly files = new Map<string, string>();
  /** Events observed and not yet written, in order: turned into lines when they are appended. */
  private queue: RunEvent[] = [];
  /** Set while lines wait to be appended, from when the first of them came. */
  private flushTimer: NodeJS.Timeout | undefined;
  private firstPendingAt = 0;
  private broken = false;
  private readonly tree = new TreeBuilder();

  /** Set once the run's directory and `run.json` exist. */
  private dir = '';
  private record: RunRecord | undefined;
  /** Settles when the directory is made, or the record given up. */
  private ready: Promise<void> = Promise.resolve();

  private constructor(private readonly problem: RecordProblem) {}

  /** The run's id, once its directory exists. */
  get id(): string {
    return this.record?.id ?? '';
  }

  /**
   * Starts a run's record without holding the run up: its directory and `run.json` are made in
   * the background while the run starts (events wait in memory meanwhile). `setup` gives what the
   * run was asked, or undefined when it is not to be recorded.
   */
  static start(
    runsDir: string,
    setup: () => Promise<{ request: RecordedRequest; links: RunLinks } | undefined>,
    problem: RecordProblem,
  ): RunRecorder {
    const recorder = new RunRecorder(problem);
    recorder.ready = recorder.create(runsDir, new Date(), setup);
    return recorder;
  }

  /** `start`, then waits for the directory; undefined (said once) when it cannot be made. */
  static async open(
    runsDir: string,
    request: RecordedRequest,
    links: RunLinks,
    problem: RecordProblem,
  ): Promise<RunRecorder | undefined> {
    const recorder = RunRecorder.start(runsDir, async () => ({ request, links }), problem);
    await recorder.ready;
    return recorder.record ? recorder : undefined;
  }

  private async create(
    runsDir: string,
    startedAt: Date,
    setup: () => Promise<{ request: RecordedRequest; links: RunLinks } | undefined>,
  ): Promise<void> {
    let made = '';
    try {
      const asked = await setup();
      if (!asked) {
        this.broken = true;
        return;
      }
      mkdirSync(runsDir, { recursive: true, mode: DIR_MODE });
      const shared = sharedDirWarning([dirname(runsDir), runsDir]);
      if (shared !== undefined) this.problem(shared);
      const id = newRunDir(runsDir, startedAt);
      this.dir = join(runsDir, id);
      made = this.dir;
      // Beside the pid, what tells this process from another that gets its pid later (a container's
      // pid 1, a reboot): without it a killed run would look alive as long as its pid is in use.
      const identity = ownIdentity();
      this.record = {
        version: RUN_RECORD_VERSION,
        id,
        pid: process.pid,
        ...(identity ? { process: identity } : {}),
        request: asked.request,
        startedAt: isoTime(startedAt),
        status: 'running',
        ...asked.links,
      };
      this.writeRunJson(this.record);
      writeFileSync(join(this.dir, RESERVE_FILE), Buffer.alloc(RESERVED_BYTES), { mode: FILE_MODE });
    } catch (error) {
      this.broken = true;
      this.record = undefined;
      // A run's directory never stays without its run.json (a full disk): `axe runs` would find it.
      if (made !== '') rmSync(made, { recursive: true, force: true });
      this.problem(
        `run record: cannot write under ${runsDir} (${fsErrorReason(error)}): this run is not recorded`,
      );
    }
  }

  /** Feed every event of the run here. */
  readonly observe = (event: RunEvent): void => {
    if (this.broken || event.type === 'text.delta') return;
    this.queue.push(event);
    if (this.flushTimer === undefined) {
      this.firstPendingAt = Date.now();
      this.flushTimer = setTimeout(this.flush, FLUSH_QUIET_MS).unref();
      RunRecorder.appendAtExit(this);
    } else if (Date.now() - this.firstPendingAt < FLUSH_WITHIN_MS - FLUSH_QUIET_MS) {
      this.flushTimer.refresh();
    }
  };

  /**
   * Appends what is pending, one write per transcript (synchronous: a few µs each, far cheaper
   * than the promise machinery of async appends); after a failed append the record is given up
   * (said once).
   */
  private readonly flush = (): void => {
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    RunRecorder.unwritten.delete(this);
    if (this.broken) {
      this.queue = [];
      return;
    }
    if (!this.record) {
      // Still making the directory: the lines wait for it.
      void this.ready.then(this.flush);
      return;
    }
    const events = this.queue;
    this.queue = [];
    try {
      const pending = new Map<string, string[]>();
      for (const event of events) {
        const file = this.fileOf(event);
        this.tree.observe(event, file);
        const { parent } = splitPath(event.path);
        // `parent` joins the line as its last key: a copy of the event to add it costs more than the JSON.
        const json = JSON.stringify(this.largeOutputsStored(event));
        const line = parent === undefined ? json : `${json.slice(0, -1)},"parent":${JSON.stringify(parent)}}`;
        const text = `${maskSecrets(line)}\n`;
        const lines = pending.get(file);
        if (lines) lines.push(text);
        else pending.set(file, [text]);
      }
      for (const [file, lines] of pending) {
        appendFileSync(join(this.dir, file), lines.join(''), { mode: FILE_MODE });
      }
    } catch (error) {
      this.giveUp(error);
    }
  };

  /**
   * The event as its line holds it: a tool output over OUTPUT_INLINE_MAX is written once to its own
   * file, and the line refers to it (see OUTPUT_INLINE_MAX). Rare: other events are not copied.
   */
  private largeOutputsStored(event: RunEvent): unknown {
    if (event.type === 'tool.end' && event.output.length > OUTPUT_INLINE_MAX) {
      return { ...event, output: '', outputRef: this.storeOutput(event.path, event.callId, event.output) };
    }
    if (event.type !== 'message' || event.message.role !== 'tool') return event;
    const { results } = event.message;
    if (!results.some((result) => result.content.length > OUTPUT_INLINE_MAX)) return event;
    const stored = results.map((result) =>
      result.content.length > OUTPUT_INLINE_MAX
        ? {
            ...result,
            content: '',
            contentRef: this.storeOutput(event.path, result.callId, result.content, true),
          }
        : result,
    );
    return { ...event, message: { ...event.message, results: stored } };
  }

  /**
   * Writes a tool's output to `outputs/`, or gives the file its `tool.end` wrote it to (the tool
   * message, which comes after, holds the same output: `last`, the output is then forgotten).
   */
  private storeOutput(path: string, callId: string, output: string, last = false): OutputRef {
    const key = `${path}\n${callId}`;
    const known = this.outputs.get(key);
    if (last) this.outputs.delete(key);
    if (known?.output === output) return known.ref;
    if (this.outputCount === 0) {
      mkdirSync(join(this.dir, 'outputs'), { mode: DIR_MODE });
    }
    const masked = maskSecrets(output);
    const file = join('outputs', `${String(this.outputCount++).padStart(4, '0')}.txt`);
    writeFileSync(join(this.dir, file), masked, { mode: FILE_MODE, flag: 'wx' });
    const ref = { file, bytes: Buffer.byteLength(masked) };
    if (!last) this.outputs.set(key, { output, ref });
    return ref;
  }

  /** The transcript of the event's agent, named in the order agents first appear. */
  private fileOf(event: RunEvent): string {
    let file = this.files.get(event.path);
    if (file === undefined) {
      file = join('agents', `${String(this.files.size).padStart(4, '0')}-${safeName(event.agent)}.jsonl`);
      this.files.set(event.path, file);
    }
    return file;
  }

  private static appendAtExit(recorder: RunRecorder): void {
    RunRecorder.unwritten.add(recorder);
    if (RunRecorder.exitHooked) return;
    RunRecorder.exitHooked = true;
    // Synchronous appends; the lines of a run whose directory is still being made are lost.
    process.on('exit', () => {
      for (const waiting of RunRecorder.unwritten) waiting.flush();
    });
  }

  /** The run's id once its directory and `run.json` exist; '' when it is not recorded. */
  async created(): Promise<string> {
    await this.ready;
    return this.broken ? '' : this.id;
  }

  /** Resolves once every line observed so far is appended (or the record given up). */
  async written(): Promise<void> {
    await this.ready;
    this.flush();
  }

  /**
   * The run ended: the last lines, `ended.json` (how it ended, in the space kept for it since the
   * start: see RESERVE_FILE), then `run.json`, written durably (synced before it replaces the old
   * one). `axe runs` takes a run whose run.json says `running` but that has an ended.json for
   * ended. A run.json that cannot be written is said once. False when there is no record (never
   * made) or it is incomplete.
   */
  async finish(outcome: RunOutcome, exitCode: number, endedAt = new Date()): Promise<boolean> {
    await this.written();
    const { record } = this;
    if (!record) return false;
    const tree = this.tree.roots[0];
    const usage = treeUsage(outcome.result);
    const cost = treeCost(outcome.result);
    const ending: RunEnding = {
      endedAt: isoTime(endedAt),
      durationMs: endedAt.getTime() - Date.parse(record.startedAt),
      status: outcome.result.status,
      exitCode,
      ...(outcome.error ? { error: outcome.error.message } : {}),
      usage: { ...usage, total: usage.inputTokens + usage.outputTokens },
      ...(cost !== undefined ? { cost } : {}),
    };
    Object.assign(record, ending, tree ? { tree } : {});
    try {
      // The space kept since the start is what ended.json is written in, whatever the disk has left.
      rmSync(join(this.dir, RESERVE_FILE), { force: true });
      const { error } = ending;
      // Masked before it is cut: a cut through a secret would leave its start unmasked.
      const kept =
        error === undefined ? ending : { ...ending, error: maskSecrets(error).slice(0, ENDED_ERROR_MAX) };
      replaceFileSync(
        join(this.dir, ENDED_FILE),
        `${maskSecrets(JSON.stringify(kept))}\n`,
        FILE_MODE,
        DURABLE,
      );
    } catch {
      // run.json may still fit; if it does not either, that is what is said.
    }
    try {
      this.writeRunJson(record, DURABLE);
      return !this.broken;
    } catch (error) {
      try {
        // A tree too large for the space left: the transcripts hold it.
        const { tree: _, ...rest } = record;
        this.writeRunJson(rest, DURABLE);
        return !this.broken;
      } catch {
        this.broken = true;
        this.problem(`the run record could not be completed (${fsErrorReason(error)})`);
        return false;
      }
    }
  }

  /**
   * The process exits with another code than `finish` recorded: stdout's reader went away after
   * the answer was handed to it (141), or stdout could not take it (1). run.json says so.
   */
  exitedWith(code: number): void {
    const { record } = this;
    if (this.broken || record?.exitCode === undefined || record.exitCode === code) return;
    record.exitCode = code;
    try {
      this.writeRunJson(record);
    } catch (error) {
      this.giveUp(error);
    }
  }

  /** run.json, replaced whole (see `replaceFileSync`: a log, not the user's data). */
  private writeRunJson(record: RunRecord, options?: { durable: boolean }): void {
    replaceFileSync(join(this.dir, 'run.json'), runJsonText(record), FILE_MODE, options);
  }

  private giveUp(error: unknown): void {
    if (this.broken) return;
    this.broken = true;
    this.problem(
      `run record: cannot write ${this.dir} (${fsErrorReason(error)}): the record of this run is incomplete`,
    );
  }
}

/**
 * run.json's text, masked, at most `maxBytes` (what `axe runs` reads of it) whatever the run: a
 * tree that would take it past them is left out — the transcripts hold it, and `axe runs show`
 * builds it from them.
 */
export function runJsonText(record: RunRecord, maxBytes = RUN_JSON_MAX): string {
  const text = `${maskSecrets(JSON.stringify(record, null, 2))}\n`;
  // A UTF-16 unit is 3 bytes of UTF-8 at the most: most records need no count of their bytes.
  if (record.tree === undefined || text.length * 3 <= maxBytes || Buffer.byteLength(text) <= maxBytes) {
    return text;
  }
  const { tree: _, ...rest } = record;
  return `${maskSecrets(JSON.stringify(rest, null, 2))}\n`;
}

/** A new directory `<runsDir>/<run-id>`, created exclusively; its id. */
function newRunDir(runsDir: string, startedAt: Date): string {
  for (let attempt = 0; ; attempt++) {
    const id = newRunId(startedAt);
    try {
      mkdirSync(join(runsDir, id), { mode: DIR_MODE });
      mkdirSync(join(runsDir, id, 'agents'), { mode: DIR_MODE });
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
