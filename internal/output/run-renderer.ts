import { ExitCode, RecordingError } from '../errors.js';
import type { Pricer } from '../prices/index.js';
import type { EmitEvent, RunEvent } from '../runner/events.js';
import type { RunOutcome } from '../runner/types.js';
import { maskSecrets, SecretHoldback } from '../secrets.js';
import { openEventLog } from './event-log.js';
import { InFlightAgents } from './in-flight.js';
import { renderJsonEnvelope } from './json-envelope.js';
import { LiveTree, type LiveTreeTarget } from './live-tree-driver.js';
import type { TextSink } from './text-sink.js';
import { createVerboseFormatter, type VerboseRunInfo, verboseSummary } from './verbose.js';

export interface RunRendererOptions {
  json: boolean;
  verbose: boolean;
  /** For `--verbose`'s opening block: where the user message came from, the run's timeout. */
  run?: VerboseRunInfo;
  /** Print the top-level agent's text as it arrives (ignored with `json`). */
  stream: boolean;
  stdout: TextSink;
  stderr: TextSink;
  /** stdout is a terminal: an answer is ended with a newline (never in a pipe or file: Go's bytes). */
  tty?: boolean;
  /** Draw the live agent tree there (`--progress`); stderr lines, and stdout's on a terminal, go above it. */
  progress?: LiveTreeTarget;
  /** `--events FILE` (`-`: stderr): every event as a line of JSON. */
  events?: string;
}

export interface RunRenderer {
  /** Feed every event of the run here. */
  emit: EmitEvent;
  /**
   * Print the outcome: the answer (or the JSON envelope) on stdout, the verbose summary on stderr;
   * `price` gives them dollars (asked only with `--json` or `--verbose`).
   */
  finish(outcome: RunOutcome, price?: Pricer): void;
  /** Agent paths running right now. */
  inFlight(): string[];
  /** Takes the live tree off the terminal for good (before an interrupt line, on exit). */
  stop(): void;
  /** The live tree is off the terminal while `work` runs (a question put to the user). */
  held<T>(work: () => Promise<T>): Promise<T>;
}

/**
 * The renderers of one run, all fed by the one event stream and the outcome. stdout carries the
 * final answer only (nothing appended, as Go axe), or the one-line JSON envelope; everything else
 * goes to stderr.
 */
export function createRunRenderer(options: RunRendererOptions): RunRenderer {
  const tree = options.progress ? new LiveTree(options.progress) : undefined;
  const aboveTree = (sink: TextSink): TextSink =>
    tree ? { write: (text: string) => tree.above(text, sink) } : sink;
  // A stdout that is a terminal is most likely the tree's terminal too.
  const stdoutSink = options.tty ? aboveTree(options.stdout) : options.stdout;
  // Nothing the run prints may carry a key: a model or server may echo one back.
  let lastOut = '';
  const stdout = maskedStream({
    write: (text: string) => {
      if (text !== '') lastOut = text;
      return stdoutSink.write(text);
    },
  });
  const stderr = masked(aboveTree(options.stderr));
  const inFlight = new InFlightAgents();
  const formatVerbose = options.verbose ? createVerboseFormatter(options.run) : undefined;
  const streaming = options.stream && !options.json;
  /** Text streamed during the current top-level turn: the final turn's text when the run ends. */
  let turnText = '';

  const eventLog = options.events !== undefined ? openEventLog(options.events, stderr) : undefined;

  const emit = (event: RunEvent): void => {
    eventLog?.write(event);
    inFlight.observe(event);
    tree?.observe(event);
    // A sub-agent's warnings are Go axe's `[sub-agent] Warning:` lines: shown with --verbose only.
    if (event.type === 'notice') stderr.write(`${event.message}\n`);
    else if (event.type === 'warning' && event.depth === 0) stderr.write(`Warning: ${event.message}\n`);
    else if (event.type === 'warning' && formatVerbose)
      stderr.write(`[sub-agent] Warning: ${event.message}\n`);
    if (formatVerbose) for (const line of formatVerbose(event)) stderr.write(`${line}\n`);
    if (!streaming || event.depth !== 0) return;
    if (event.type === 'turn.start') turnText = '';
    else if (event.type === 'text.delta') {
      turnText += event.text;
      stdout.stream(event.text);
    } else if (event.type === 'turn.end' || event.type === 'agent.end') {
      // The turn's text is whole: what was held back (it could have begun a key) goes out now.
      stdout.flush();
      // A turn's text cannot be known to be final until the turn ends: text said before tool
      // calls has been streamed already, so set the final answer apart from it.
      if (event.type === 'turn.end' && event.toolCalls > 0 && turnText !== '') stdout.write('\n\n');
    }
  };

  const finish = (outcome: RunOutcome, price?: Pricer): void => {
    tree?.stop();
    eventLog?.close();
    stdout.flush();
    if (!showsAnswer(outcome)) {
      // Go axe prints nothing on stdout for a failed run, no envelope either.
    } else if (options.json) stdout.write(renderJsonEnvelope(outcome, price));
    else if (outcome.result.output !== undefined) stdout.write(`${JSON.stringify(outcome.result.output)}\n`);
    else {
      const content = outcome.result.content;
      // Whatever did not arrive as deltas (a replayed or non-streamed turn) is printed now.
      stdout.write(streaming && content.startsWith(turnText) ? content.slice(turnText.length) : content);
      if (options.tty && lastOut !== '' && !lastOut.endsWith('\n')) stdout.write('\n');
    }
    if (formatVerbose) for (const line of verboseSummary(outcome, price)) stderr.write(`${line}\n`);
  };

  return {
    emit,
    finish,
    inFlight: () => inFlight.paths(),
    stop: () => tree?.stop(),
    held: (work) => (tree ? tree.held(work) : work()),
  };
}

function masked(sink: TextSink): TextSink {
  return { write: (text) => sink.write(maskSecrets(text)) };
}

interface MaskedStream extends TextSink {
  /** Streamed text: written masked, but for a tail that could begin a key, held until it is known. */
  stream(text: string): void;
  /** Writes the held tail (masked). */
  flush(): void;
}

/**
 * A masked sink that also takes streamed text, whose deltas are masked as one text (a key can come
 * split across them). Whatever else is written after streamed text goes out after its held tail.
 */
function maskedStream(sink: TextSink): MaskedStream {
  const holdback = new SecretHoldback();
  const put = (text: string): void => {
    if (text !== '') sink.write(text);
  };
  const flush = () => put(holdback.flush());
  return {
    stream: (text) => put(holdback.push(text)),
    flush,
    write: (text) => {
      flush();
      return sink.write(maskSecrets(text));
    },
  };
}

/**
 * A run that failed prints no answer (nor `--json` envelope), except when the budget stopped it
 * (the answer so far) or the run finished and only writing its cassette failed.
 */
function showsAnswer(outcome: RunOutcome): boolean {
  const { error } = outcome;
  return error === undefined || error.exitCode === ExitCode.budget || error instanceof RecordingError;
}
