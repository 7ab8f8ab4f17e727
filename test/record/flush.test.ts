import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LEAD, openRecorder } from './trace-fixture.js';

const at = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A recorder, a way to feed it warnings, and the lines its lead's transcript holds now. */
async function recorder() {
  const { recorder: opened, runsDir } = await openRecorder();
  const [run] = readdirSync(runsDir);
  const transcript = join(runsDir, run ?? '', 'agents', `0000-${LEAD}.jsonl`);
  let sent = 0;
  return {
    send: () => {
      sent++;
      opened.observe({
        path: LEAD,
        agent: LEAD,
        depth: 0,
        time: Date.now(),
        type: 'warning',
        message: `w${sent}`,
      });
    },
    lines: () => (existsSync(transcript) ? readFileSync(transcript, 'utf8').trim().split('\n').length : 0),
  };
}

// Timers fire in the order they are due, however late: each check below is due after (or before)
// the flush whatever the machine's load.
describe('the run record appends its lines', () => {
  it('once the events pause for 50 ms, not in the midst of a burst', async () => {
    const { send, lines } = await recorder();
    send();
    await at(30);
    send();
    // A flush every 50 ms would have written the first line by now.
    await at(25);
    expect(lines()).toBe(0);
    await at(60);
    expect(lines()).toBe(2);
  });

  it('within 500 ms of the first waiting line, however long the events go on', async () => {
    const { send, lines } = await recorder();
    send();
    const started = Date.now();
    let written = 0;
    while (Date.now() - started < 1200 && written === 0) {
      await at(20);
      send();
      written = lines();
    }
    expect(written).toBeGreaterThan(0);
    // 500 ms, and room for a loaded machine's late timers.
    expect(Date.now() - started).toBeLessThan(900);
  });
});
