import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoTime } from '../../internal/time.js';

// The run record, memory entries, SigV4 and transcripts format times with isoTime instead of
// toISOString (see internal/time.ts): it must be the same text for every date JavaScript has.
describe('isoTime', () => {
  it('is toISOString for any time from -271821 to +275760 (every year form, every millisecond)', () => {
    fc.assert(
      fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), (ms) => {
        const date = new Date(ms);
        expect(isoTime(date)).toBe(date.toISOString());
      }),
      { numRuns: 2000, seed: 26 },
    );
    for (const ms of [
      0, -1, 253402300799999, 253402300800000, -62167219200000, -62167219200001, 8.64e15, -8.64e15,
    ]) {
      expect(isoTime(new Date(ms))).toBe(new Date(ms).toISOString());
    }
  });

  it('an invalid date is a RangeError, as toISOString throws', () => {
    expect(() => isoTime(new Date(Number.NaN))).toThrow(RangeError);
  });
});
