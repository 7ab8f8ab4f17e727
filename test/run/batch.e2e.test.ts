import { describe, expect, it } from 'vitest';
import { agentToml } from './agents.js';
import { e2eHomes, lines, runAxe } from './cli.js';

/** `axe run <agent> --map FILE`: a batch of runs over a file of items, against the fake server. */
const setup = e2eHomes();

interface Line {
  key: string;
  line: number;
  status: string;
  answer: string | null;
  error: string | null;
  run_id: string | null;
  usage: { input_tokens: number; output_tokens: number };
}

function parsed(stdout: string): Line[] {
  return lines(stdout).map((line) => JSON.parse(line) as Line);
}

async function seed(extra: string[] = []) {
  const { home, fake } = await setup();
  home.agent('labeler', agentToml('labeler', { extra }));
  // Each request is answered with its own message, upper-cased: the answer tells which item it was.
  fake.respond((request) => ({ text: `A:${request.lastUserText.toUpperCase()}` }));
  const run = (args: string[], stdin?: string) =>
    runAxe(['run', 'labeler', '--agents-dir', home.agentsDir, ...args], {
      env: home.env(fake.url),
      cwd: home.root,
      ...(stdin !== undefined ? { stdin } : {}),
    });
  return { home, fake, run };
}

describe.concurrent('axe run --map', () => {
  it('JSONL: the message field of each line, one result line per item in input order, exit 0', async () => {
    const { home, fake, run } = await seed();
    home.file('items.jsonl', '{"message":"one"}\n\n{"prompt":"two"}\n{"id":7}\n');
    const result = await run(['--map', 'items.jsonl']);
    expect(result.code, result.stderr).toBe(0);
    const out = parsed(result.stdout);
    expect(out.map((l) => [l.key, l.line, l.status, l.answer])).toEqual([
      ['1', 1, 'completed', 'A:ONE'],
      ['3', 3, 'completed', 'A:TWO'],
      ['4', 4, 'completed', 'A:{"ID":7}'],
    ]);
    expect(out[0]?.usage).toEqual({ input_tokens: 10, output_tokens: 5 });
    expect(out[0]?.run_id).toMatch(/^\d{8}-/);
    expect(fake.requests).toHaveLength(3);
    expect(result.stderr).toMatch(/^axe: batch (\S+): 3 items\n/);
    expect(result.stderr).toMatch(/axe: batch \S+: 3 completed, 0 failed\n$/);
  });
});
