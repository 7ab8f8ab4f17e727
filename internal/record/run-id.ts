import { isoTime } from '../time.js';

/**
 * A run's id: its UTC start time to the millisecond, then random hex, so ids sort by start:
 * `20261125-160512.042-3fa9c1`.
 * Two runs that draw the same id are told apart when the second cannot create its directory.
 */
export function newRunId(now = new Date()): string {
  const stamp = isoTime(now).replace(/[-:]/g, '').replace('T', '-').slice(0, 19);
  const random = Math.floor(Math.random() * 0x1000000)
    .toString(16)
    .padStart(6, '0');
  return `${stamp}-${random}`;
}

const RUN_ID = /^\d{8}-\d{6}\.\d{3}-[0-9a-f]{6}$/;

export function isRunId(name: string): boolean {
  return RUN_ID.test(name);
}
