import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { failedBeforeStart } from '../../internal/runner/result.js';
import { LEAD, openRecorder } from './trace-fixture.js';

const at = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A recorder, a way to feed it warnings, and the lines its lead's transcript holds now. */
async function recorder(problem?: (message: string) => void) {
  const { recorder: opened, runsDir } = await openRecorder(undefined, problem);
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
    messages: () =>
      readFileSync(transcript, 'utf8')
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { message: string }).message),
    transcript,
    recorder: opened,
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

  it('while the events go on for ever, at a bound from the first waiting line', async () => {
    // A line every 20 ms never leaves the 50 ms pause the flush waits for, so only the bound
    // (500 ms) writes anything: that the loop ends at all shows it (no bound in milliseconds here,
    // which a loaded machine's late timers would break).
    const { send, lines, recorder: opened } = await recorder();
    send();
    let written = 0;
    while (written === 0) {
      await at(20);
      send();
      written = lines();
    }
    expect(written).toBeGreaterThan(1);
    // Nothing left waiting for a timer once the file's temp dirs are gone.
    await opened.written();
  });
});

describe("the run record's appends", () => {
  it('keep each transcript in event order over 400 flushes', async () => {
    const { send, messages, recorder: opened } = await recorder();
    for (let i = 0; i < 400; i++) {
      send();
      // Each line is flushed on its own (written() flushes after a tick), not waited for.
      void opened.written();
      for (let tick = 0; tick < 4; tick++) await null;
    }
    await opened.written();
    expect(messages()).toEqual(Array.from({ length: 400 }, (_, i) => `w${i + 1}`));
  });

  it('an append that fails is said once, the record is given up, and the run is not reported recorded', async () => {
    const problems: string[] = [];
    const { send, transcript, recorder: opened } = await recorder((message) => problems.push(message));
    // The lead's transcript cannot be a file: a directory holds its name.
    mkdirSync(transcript);
    send();
    await opened.written();
    send();
    await opened.written();
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^run record: cannot write \S+ \(.+\): the record of this run is incomplete$/,
    );
    const outcome = {
      result: failedBeforeStart({ agent: LEAD, path: LEAD, depth: 0 }, 'completed', '', 10),
      budget: { used: 0 },
    };
    expect(await opened.finish(outcome, 0)).toBe(false);
    expect(problems).toHaveLength(1);
  });
});
