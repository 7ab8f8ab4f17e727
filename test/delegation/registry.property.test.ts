import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChildRegistry } from '../../internal/delegation/registry.js';
import { InternalError } from '../../internal/errors.js';

/** 004's invariants under random spawn / complete / read sequences, including bad ones. */
const op = fc.oneof(
  fc.record({ kind: fc.constant('spawn' as const), id: fc.integer({ min: 0, max: 6 }) }),
  fc.record({ kind: fc.constant('complete' as const), id: fc.integer({ min: 0, max: 6 }) }),
  fc.record({ kind: fc.constant('read' as const), id: fc.integer({ min: 0, max: 6 }) }),
);

describe('ChildRegistry', () => {
  it('pending + completed = spawned; pending only shrinks by completion; completed only grows; no double count', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        const registry = new ChildRegistry<string>();
        const started = new Set<string>();
        const done = new Set<string>();
        let completedBefore = new Set<string>();
        for (const { kind, id: n } of ops) {
          const id = `c${n}`;
          const pendingBefore = new Set(registry.pending().map((c) => c.id));
          if (kind === 'spawn') {
            if (started.has(id)) expect(() => registry.spawn(id, 't')).toThrow(InternalError);
            else {
              registry.spawn(id, 't');
              started.add(id);
            }
          } else if (kind === 'complete') {
            if (!started.has(id) || done.has(id)) {
              expect(() => registry.complete(id, 'again')).toThrow(InternalError);
            } else {
              registry.complete(id, `result ${id}`);
              done.add(id);
            }
          } else {
            expect(registry.read(id)).toBe(done.has(id) ? `result ${id}` : undefined);
          }
          const pending = new Set(registry.pending().map((c) => c.id));
          const completed = new Set(registry.completed().map((c) => c.id));
          expect(pending.size + completed.size).toBe(registry.spawned);
          expect(registry.spawned).toBe(started.size);
          for (const c of completed) expect(pending.has(c)).toBe(false);
          // Pending loses only what completed; completed keeps everything it had, results unchanged.
          for (const c of pendingBefore) if (!pending.has(c)) expect(completed.has(c)).toBe(true);
          for (const c of completedBefore) expect(completed.has(c)).toBe(true);
          for (const c of registry.completed()) expect(c.result).toBe(`result ${c.id}`);
          completedBefore = completed;
        }
      }),
      { numRuns: 200 },
    );
  });
});
