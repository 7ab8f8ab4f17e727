import { ConfigError } from '../errors.js';
import { TreeBuilder } from '../record/tree.js';
import type { RunEvent } from '../runner/events.js';
import { frame } from './live-tree.js';
import type { TextSink } from './text-sink.js';

/** Where and how the live tree is drawn. */
export interface LiveTreeTarget {
  stream: TextSink;
  size(): { columns: number; rows: number };
  color: boolean;
}

/** Where the tree may be drawn: a stream that says whether it is a terminal, and its size. */
export interface Terminal extends TextSink {
  readonly isTTY?: boolean;
  readonly columns?: number | undefined;
  readonly rows?: number | undefined;
}

export type ProgressMode = 'never' | 'auto' | 'always';

const MODES: readonly ProgressMode[] = ['never', 'auto', 'always'];
const FRAME_INTERVAL_MS = 100;
/** How much of a sub-agent's streamed text is kept for its latest line (a row is narrower). */
const SAID_TAIL = 512;
const HIDE_CURSOR = '\x1b[?25l';
const SHOW_CURSOR = '\x1b[?25h';

/** `--progress <when>`; absent is `auto`. */
export function progressMode(value: unknown): ProgressMode {
  if (value === undefined) return 'auto';
  const mode = MODES.find((m) => m === value);
  if (mode === undefined) {
    throw new ConfigError(`--progress: expected never, auto or always, got "${String(value)}"`);
  }
  return mode;
}

/**
 * Whether the tree is drawn on `stream`: `auto` only on a terminal that can move its cursor (TERM
 * set and not `dumb`) and without `--verbose` (its lines are the report then); `always` anywhere.
 */
export function progressTarget(
  mode: ProgressMode,
  context: { verbose: boolean; stream: Terminal; env: NodeJS.ProcessEnv },
): LiveTreeTarget | undefined {
  const { stream, env } = context;
  if (mode === 'never') return undefined;
  const term = env.TERM ?? '';
  if (mode === 'auto' && (stream.isTTY !== true || term === '' || term === 'dumb' || context.verbose)) {
    return undefined;
  }
  return {
    stream,
    size: () => ({ columns: stream.columns || 80, rows: stream.rows || 24 }),
    color: (env.NO_COLOR ?? '') === '',
  };
}

/**
 * Draws the tree in place on its stream, at most every 100 ms and only when the frame changed.
 * The timer starts with the first event and never keeps the process alive.
 */
export class LiveTree {
  private readonly state = new TreeBuilder();
  /** The end of each streaming sub-agent's text, by path: its latest line goes on its row. */
  private readonly said = new Map<string, string>();
  private timer: NodeJS.Timeout | undefined;
  /** Lines of the frame on screen; the cursor is at the start of the line below it. */
  private drawn = 0;
  private last = '';
  private cursorHidden = false;
  /** A line written above the tree is not finished yet: drawing now would go after it. */
  private midLine = false;
  private holds = 0;
  private stopped = false;
  private readonly restoreCursor = (): void => {
    this.target.stream.write(SHOW_CURSOR);
  };

  constructor(private readonly target: LiveTreeTarget) {}

  observe(event: RunEvent): void {
    if (this.stopped) return;
    this.state.observe(event);
    if (event.type === 'text.delta' && event.depth > 0) {
      this.said.set(event.path, ((this.said.get(event.path) ?? '') + event.text).slice(-SAID_TAIL));
    } else if (event.type === 'agent.end') this.said.delete(event.path);
    this.timer ??= setInterval(() => this.draw(Date.now()), FRAME_INTERVAL_MS).unref();
  }

  /** Writes `text` to `sink` where the tree was; the tree comes back below it on the next frame. */
  above(text: string, sink: TextSink): void {
    if (text === '') return;
    this.clear();
    sink.write(text);
    this.midLine = !text.endsWith('\n');
  }

  /** The tree is off the screen while `work` runs (a question put to the user). */
  async held<T>(work: () => Promise<T>): Promise<T> {
    this.holds++;
    this.clear();
    try {
      return await work();
    } finally {
      this.holds--;
    }
  }

  draw(now: number): void {
    if (this.stopped || this.midLine || this.holds > 0) return;
    const { columns, rows } = this.target.size();
    const lines = frame(this.state.roots, {
      width: columns,
      height: rows,
      now,
      color: this.target.color,
      said: this.said,
    });
    const text = lines.join('\n');
    if (text === this.last && this.drawn === lines.length) return;
    let out = '';
    if (!this.cursorHidden) {
      out += HIDE_CURSOR;
      this.cursorHidden = true;
      process.once('exit', this.restoreCursor);
    }
    out += this.erase();
    for (const line of lines) out += `\x1b[2K${line}\n`;
    this.target.stream.write(out);
    this.drawn = lines.length;
    this.last = text;
  }

  /** Takes the tree off the screen (it comes back on the next frame). */
  clear(): void {
    if (this.drawn === 0) return;
    this.target.stream.write(this.erase());
    this.drawn = 0;
    this.last = '';
  }

  /** Clears the tree for good and shows the cursor again. */
  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    this.clear();
    if (this.cursorHidden) {
      process.off('exit', this.restoreCursor);
      this.restoreCursor();
    }
  }

  /** Cursor back to the tree's first line, and everything from there down erased. */
  private erase(): string {
    return `${this.drawn > 0 ? `\x1b[${this.drawn}A` : ''}\r\x1b[J`;
  }
}
