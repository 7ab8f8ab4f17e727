import { closeSync, openSync, writeSync } from 'node:fs';
import { ConfigError } from '../errors.js';
import { fsErrorReason } from '../fs/fs-error.js';
import type { RunEvent } from '../runner/events.js';
import { maskSecrets } from '../secrets.js';
import type { TextSink } from './run-renderer.js';

export interface EventLog {
  write(event: RunEvent): void;
  close(): void;
}

/**
 * `--events FILE` (`-`: stderr): every event of the run as one line of JSON
 * (schemas/run-event.schema.json), written as it happens.
 */
export function openEventLog(target: string, stderr: TextSink): EventLog {
  if (target === '-') return { write: (event) => stderr.write(line(event)), close: () => {} };
  let fd: number;
  try {
    fd = openSync(target, 'w', 0o644);
  } catch (error) {
    throw new ConfigError(`--events: cannot write ${target} (${fsErrorReason(error)})`);
  }
  /** A write failed (said once), or the log is closed: nothing more is written. */
  let broken = false;
  return {
    write: (event) => {
      if (broken) return;
      try {
        writeSync(fd, line(event));
      } catch (error) {
        broken = true;
        stderr.write(
          `Warning: --events: cannot write ${target} (${fsErrorReason(error)}): events stop here\n`,
        );
      }
    },
    close: () => {
      // Events after the run's end (a last warning of its record) have no place in it.
      broken = true;
      closeSync(fd);
    },
  };
}

function line(event: RunEvent): string {
  return `${maskSecrets(JSON.stringify(event))}\n`;
}
