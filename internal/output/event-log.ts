import { ConfigError } from '../errors.js';
import { fsErrorReason } from '../fs/fs-error.js';
import { NonBlockingWriter } from '../fs/non-blocking-writer.js';
import { openWritableSync, type WritableFile } from '../fs/open-writable.js';
import { UnreadableFileError } from '../fs/read-bounded.js';
import { snakeCaseKeys } from '../json-keys.js';
import type { RunEvent } from '../runner/events.js';
import { maskSecrets, SecretHoldback } from '../secrets.js';
import type { TextSink } from './text-sink.js';

export interface EventLog {
  write(event: RunEvent): void;
  close(): void;
}

/**
 * `--events FILE` (`-`: the sink given, stderr; stdout for `--output-format stream-json`): every
 * event of the run as one line of JSON (schemas/run-event.schema.json), written as it happens.
 * The sink also takes the warning of a file that cannot be written.
 */
export function openEventLog(target: string, stderr: TextSink): EventLog {
  if (target === '-') return heldText({ write: (event) => stderr.write(line(event)), close: () => {} });
  let file: WritableFile;
  try {
    // 0600: the events hold the prompts and answers, as a run record does.
    file = openWritableSync(target, { mode: 0o600, pipes: true });
  } catch (error) {
    if (error instanceof UnreadableFileError) throw new ConfigError(`--events: ${target} ${error.message}`);
    throw new ConfigError(`--events: cannot write ${target} (${fsErrorReason(error)})`);
  }
  const out = new NonBlockingWriter(file.fd, (why) =>
    stderr.write(`Warning: --events: cannot write ${target} (${why}): events stop here\n`),
  );
  return heldText({
    write: (event) => out.write(Buffer.from(line(event))),
    close: () => out.close(),
  });
}

type TextDelta = Extract<RunEvent, { type: 'text.delta' }>;

/** A sub-agent's text waits for a line's end, or this many characters, before it is written. */
const CHILD_TEXT_CHUNK = 4096;

/**
 * Each agent's `text.delta` events masked as one text: a key the model echoes can come split
 * across them. Per agent path, the tail of a delta that could begin a key is held back and goes
 * out at the head of the agent's next delta; so a delta's `text` may be shorter than streamed, and
 * one whose text is all held is not written. A sub-agent's text is also gathered into whole lines
 * (or 4 KiB), one event each: a 32-way fan-out streams tens of thousands of tiny deltas, and the
 * log would be mostly their envelopes. What is still held is written as one more `text.delta`
 * (with the agent's last delta's `time`) before the agent's next other event, or at the log's close.
 */
function heldText(log: EventLog): EventLog {
  const held = new Map<string, { holdback: SecretHoldback; last: TextDelta; lines: string }>();
  const flush = (path: string): void => {
    const entry = held.get(path);
    if (!entry) return;
    held.delete(path);
    const text = entry.lines + entry.holdback.flush();
    if (text !== '') log.write({ ...entry.last, text });
  };
  return {
    write: (event) => {
      if (event.type !== 'text.delta') {
        flush(event.path);
        log.write(event);
        return;
      }
      const entry = held.get(event.path) ?? { holdback: new SecretHoldback(), last: event, lines: '' };
      entry.last = event;
      held.set(event.path, entry);
      const text = entry.holdback.push(event.text);
      if (event.depth === 0) {
        if (text !== '') log.write({ ...event, text });
        return;
      }
      entry.lines += text;
      const end =
        entry.lines.length >= CHILD_TEXT_CHUNK ? entry.lines.length : entry.lines.lastIndexOf('\n') + 1;
      if (end === 0) return;
      log.write({ ...event, text: entry.lines.slice(0, end) });
      entry.lines = entry.lines.slice(end);
    },
    close: () => {
      for (const path of [...held.keys()]) flush(path);
      log.close();
    },
  };
}

/** One event as its line: snake_case keys, as every JSON axe prints. */
function line(event: RunEvent): string {
  return `${maskSecrets(JSON.stringify(snakeCaseKeys(event)))}\n`;
}
