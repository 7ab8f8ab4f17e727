import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../internal/provider/types.js';
import { BUILTIN_TOOLS } from '../../internal/tools/index.js';
import { smallDisk } from '../fs/small-disk.js';
import { skipBecause } from '../skip.js';
import { call, toolContext } from './helpers.js';

const { write_file, edit_file } = BUILTIN_TOOLS;
const DISK_BYTES = 256 * 1024;

type Op =
  | { kind: 'write'; content: string }
  | { kind: 'edit'; oldString: string; newString: string; replaceAll: boolean };

const text = fc.string({ unit: fc.constantFrom('a', 'b', 'ab', '\n', 'é'), maxLength: 40 });
const op: fc.Arbitrary<Op> = fc.oneof(
  fc
    .tuple(text, fc.integer({ min: 0, max: 120_000 }))
    .map(([content, pad]) => ({ kind: 'write' as const, content: content + 'z'.repeat(pad) })),
  fc.record({
    kind: fc.constant('edit' as const),
    oldString: fc.constantFrom('a', 'b', 'ab'),
    newString: fc.oneof(
      text,
      fc.nat(20_000).map((n) => 'q'.repeat(n)),
    ),
    replaceAll: fc.boolean(),
  }),
);

/** What the file holds after `op` succeeds on `before`, or undefined when the tool must refuse it. */
function expected(before: string, step: Op): string | undefined {
  if (step.kind === 'write') return step.content;
  const count = before.split(step.oldString).length - 1;
  if (count === 0 || (count > 1 && !step.replaceAll)) return undefined;
  return before.split(step.oldString).join(step.newString);
}

/**
 * Random write_file / edit_file sequences on a small tmpfs that a ballast file fills to a random
 * level before every step, so writes fail at random points: after every step the file holds
 * exactly the old or the new content, and the tool said which.
 */
describe('file tools under random disk-full faults', () => {
  it('the file is always the old or the new content, and the result says which', async (context) => {
    const disk = smallDisk(`${DISK_BYTES / 1024}k`);
    if (typeof disk === 'string') return skipBecause(context, disk);
    if (disk.enter.length > 0) {
      // The tools run in this process, and resolve the workdir's real path: the /proc path to a
      // namespace's tmpfs leads them out of it. The e2e test runs axe inside the namespace instead.
      disk.unmount();
      return skipBecause(
        context,
        'the file tools run in this process, which cannot enter the tmpfs namespace (not root)',
      );
    }
    try {
      const target = join(disk.root, 'file.txt');
      const ballast = join(disk.root, 'ballast');
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(op, fc.nat(DISK_BYTES)), { minLength: 1, maxLength: 8 }),
          async (steps) => {
            rmSync(ballast, { force: true });
            writeFileSync(target, 'start ab\n');
            for (const [step, fill] of steps) {
              rmSync(ballast, { force: true });
              try {
                writeFileSync(ballast, Buffer.alloc(fill));
              } catch {
                // The disk is full before the step even starts: fine, that is a fault too.
              }
              const before = readFileSync(target, 'utf8');
              const args: JsonObject =
                step.kind === 'write'
                  ? { path: 'file.txt', content: step.content }
                  : {
                      path: 'file.txt',
                      old_string: step.oldString,
                      new_string: step.newString,
                      replace_all: step.replaceAll,
                    };
              const out = await call(
                step.kind === 'write' ? write_file : edit_file,
                args,
                toolContext(disk.root),
              );
              const after = readFileSync(target, 'utf8');
              const wanted = expected(before, step);
              if (out.isError) {
                expect(after).toBe(before);
                if (wanted !== undefined)
                  expect(out.content).toMatch(/no space left|the file was not changed/);
              } else {
                expect(after).toBe(wanted);
              }
              // No temp file is ever left behind.
              expect(readdirSync(disk.root).filter((name) => name.endsWith('.tmp'))).toEqual([]);
            }
          },
        ),
        { numRuns: 60 },
      );
    } finally {
      disk.unmount();
    }
  });
});
