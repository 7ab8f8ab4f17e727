import { describe, expect, it } from 'vitest';
import { batchEnding } from '../../internal/batch/ending.js';

/** A batch's last line and exit code: the same whether it ran in this process or on workers. */
describe('batchEnding', () => {
  const counts = { completed: 3, failed: 0, skipped: 0 };

  it('all completed: the tally, exit 0', () => {
    expect(batchEnding({ id: 'b1', counts })).toEqual({
      lines: ['axe: batch b1: 3 completed, 0 failed'],
      code: 0,
    });
  });

  it('a failed item: exit 1, pointing at show (with the queue suffix when given)', () => {
    expect(batchEnding({ id: 'b1', counts: { ...counts, failed: 1 }, commandSuffix: ' --queue Q' })).toEqual({
      lines: ['axe: batch b1: 3 completed, 1 failed (see axe batches show b1 --queue Q)'],
      code: 1,
    });
  });

  it('a cap: exit 4 naming it and the resume; skipped items counted', () => {
    expect(batchEnding({ id: 'b1', counts: { ...counts, skipped: 2 }, stoppedBy: '--max-cost' })).toEqual({
      lines: [
        'axe: batch b1: stopped by --max-cost: 3 completed, 0 failed, 2 skipped (axe batches resume b1)',
      ],
      code: 4,
    });
  });

  it('cancelled: exit 1; a signal: 128 + its number, with the note given', () => {
    expect(batchEnding({ id: 'b1', counts, cancelled: true })).toEqual({
      lines: ['axe: batch b1: cancelled: 3 completed, 0 failed'],
      code: 1,
    });
    expect(batchEnding({ id: 'b1', counts, signal: 'SIGTERM', interruptedNote: 'still running' })).toEqual({
      lines: ['axe: batch b1: still running'],
      code: 143,
    });
  });

  it('a cassette that could not be written: said first, exit 1 even when every item completed', () => {
    expect(batchEnding({ id: 'b1', counts, recordError: '--record: could not write x' })).toEqual({
      lines: ['axe: --record: could not write x', 'axe: batch b1: 3 completed, 0 failed'],
      code: 1,
    });
  });
});
