import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type SmallDisk, smallDisk } from '../fs/small-disk.js';
import { runAxe } from '../run/cli.js';
import { skipBecause } from '../skip.js';
import { agentToml as agent, script, useE2e } from './e2e-helpers.js';

/**
 * write_file / edit_file on a full disk, through the built binary: the model is told the write
 * failed, and the file on disk keeps its old content, tail included.
 */
const setup = useE2e();
let disk: SmallDisk | undefined;
afterEach(() => {
  disk?.unmount();
  disk = undefined;
});

const OLD = `${'old line\n'.repeat(6000)}the old tail\n`; // ~54 KB

describe('file tools on a full disk', () => {
  it('write_file and edit_file report the failure and leave the old file untouched', async (context) => {
    const made = smallDisk('128k');
    if (typeof made === 'string') return skipBecause(context, made);
    disk = made;
    const { home, fake } = await setup();
    const target = join(disk.root, 'notes.txt');
    writeFileSync(target, OLD);
    chmodSync(target, 0o640);
    // The agent's workdir as axe sees it: axe runs where the tmpfs is (`enter`).
    home.agent('worker', agent(disk.inside, ['write_file', 'edit_file']));
    fake.respond(
      script(
        {
          toolCalls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'x'.repeat(5 << 20) } }],
        },
        {
          toolCalls: [
            {
              name: 'edit_file',
              arguments: { path: 'notes.txt', old_string: 'the old tail', new_string: 'y'.repeat(200_000) },
            },
          ],
        },
        {
          toolCalls: [
            {
              name: 'edit_file',
              arguments: { path: 'notes.txt', old_string: 'the old tail', new_string: 'new tail' },
            },
          ],
        },
        { text: 'done' },
      ),
    );
    const result = await runAxe(['run', 'worker', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
      wrap: disk.enter,
    });
    expect(result.code).toBe(0);
    const results = fake.requests.slice(1).map((r) => r.toolResults.at(-1));
    expect(results[0]).toEqual({
      ...results[0],
      isError: true,
      content: 'could not write "notes.txt": no space left on the device; the file was not changed',
    });
    expect(results[1]?.isError).toBe(true);
    expect(results[1]?.content).toContain('no space left');
    // The third call fits: it succeeds, and the file is exactly the edited old content.
    expect(results[2]).toEqual({
      ...results[2],
      isError: false,
      content: 'replaced 1 occurrence in notes.txt',
    });
    expect(readFileSync(target, 'utf8')).toBe(OLD.replace('the old tail', 'new tail'));
    expect(statSync(target).mode & 0o777).toBe(0o640);
  });
});
