import { describe, expect, it } from 'vitest';
import { agentToml, callAgent, roleOf } from './agents.js';
import { e2eHomes, startAxe, waitFor } from './cli.js';

/** `axe run` end to end: SIGINT / SIGTERM during a fan-out. */
const setup = e2eHomes();

// Timing-sensitive: one case at a time.
describe('axe run: signals', () => {
  // SIGTERM runs with --json: the envelope shows each in-flight sub-agent as cancelled.
  for (const [signal, code, json] of [
    ['SIGINT', 130, false],
    ['SIGTERM', 143, true],
  ] as const) {
    it(`${signal} during a fan-out exits ${code} and closes every request`, async () => {
      const { home, fake } = await setup();
      home.agent('lead', agentToml('lead', { subAgents: ['w1', 'w2'] }));
      home.agent('w1', agentToml('w1')).agent('w2', agentToml('w2'));
      fake.respond((request) =>
        roleOf(request) === 'lead'
          ? { toolCalls: [callAgent('w1', 'a'), callAgent('w2', 'b')] }
          : { fault: { kind: 'hang' } },
      );
      // SIGINT runs with --verbose: its closing summary shows the run wound down by itself (every
      // request aborted, the outcome rendered) before the 500 ms fallback exit could fire.
      const mode = json ? '--json' : '--verbose';
      const args = ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'x', mode];
      const axe = startAxe(args, { env: home.env(fake.url) });
      await waitFor(() => fake.requests.length === 3);
      // The workers' requests never get an answer: the run ends only by the signal.
      axe.kill(signal);
      const result = await axe.done;
      expect(result.code).toBe(code);
      // Go axe prints nothing on stdout for a failed run; --json prints its one object, cancelled.
      if (json) expect(JSON.parse(result.stdout).error).toMatchObject({ kind: 'cancelled', exit_code: code });
      else expect(result.stdout).toBe('');
      if (!json) expect(result.stderr).toMatch(/\nDuration: \d+ms\n/);
      expect(result.stderr).toContain(`interrupted by ${signal}`);
      expect(result.stderr).toMatch(/stopping lead, .*w1.*w2|stopping lead, .*w2.*w1/);
      await waitFor(() => fake.requests.every((r) => r.finishedAt !== undefined));
      expect(fake.requests.slice(1).map((r) => r.aborted)).toEqual([true, true]);
    });
  }
});
