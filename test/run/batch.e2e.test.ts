import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentToml } from './agents.js';
import { e2eHomes, lines, runAxe, startAxe, waitFor } from './cli.js';

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

describe.concurrent('axe run --map --system', () => {
  it("replaces the agent's system prompt for every item; batch.json keeps it for a resume", async () => {
    const { home, fake, run } = await seed();
    home.file('items.jsonl', '{"message":"one"}\n{"message":"two"}\n');
    const result = await run(['--map', 'items.jsonl', '--system', 'ROLE:custom']);
    expect(result.code, result.stderr).toBe(0);
    expect(fake.requests.map((request) => request.system)).toEqual(['ROLE:custom', 'ROLE:custom']);
    const batch = JSON.parse(
      readFileSync(
        path.join(
          home.root,
          'data',
          'axe',
          'batches',
          /^axe: batch (\S+):/.exec(result.stderr)?.[1] ?? '',
          'batch.json',
        ),
        'utf8',
      ),
    ) as { system?: string };
    expect(batch.system).toBe('ROLE:custom');
  });
});

describe.concurrent('axe run --map inputs', () => {
  it("CSV: RFC 4180 quoting, columns fill the agent's [input.*]; a row with another column count is its item's error", async () => {
    const { home, fake, run } = await seed();
    home.agent(
      'labeler',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the agent file's own ${name} syntax
      'name = "labeler"\nmodel = "anthropic/claude-test"\nsystem_prompt = "ROLE:labeler label ${ticket} x${count}"\n[input.ticket]\ntype = "string"\nrequired = true\n[input.count]\ntype = "integer"\n',
    );
    home.file(
      't.csv',
      'id,ticket,count\na,"says ""hi"", then, bye",2\nb,short\nc,"two\nlines",3\nd,plain,x\n',
    );
    const result = await run(['--map', 't.csv', '--key', 'id']);
    expect(result.code).toBe(1);
    const out = parsed(result.stdout);
    expect(out.map((l) => [l.key, l.status])).toEqual([
      ['a', 'completed'],
      ['b', 'error'],
      ['c', 'completed'],
      ['d', 'error'],
    ]);
    expect(out[1]?.error).toBe('line 3: 2 columns, the header has 3');
    expect(out[3]?.error).toMatch(/input "count" must be an integer/);
    expect(fake.requests.map((r) => r.system)).toEqual([
      'ROLE:labeler label says "hi", then, bye x2',
      'ROLE:labeler label two\nlines x3',
    ]);
  });

  it('lines from stdin (-): each non-empty line is the message, after the -p text', async () => {
    const { fake, run } = await seed();
    const result = await run(['--map', '-', '--map-format', 'lines', '-p', 'Label:'], 'alpha\n\nbeta\n');
    expect(result.code, result.stderr).toBe(0);
    expect(parsed(result.stdout).map((l) => [l.key, l.answer])).toEqual([
      ['1', 'A:LABEL:\n\nALPHA'],
      ['3', 'A:LABEL:\n\nBETA'],
    ]);
    expect(fake.requests).toHaveLength(2);
  });

  it("a malformed JSONL line is its item's error and the others run; --strict-input refuses the batch first", async () => {
    const { home, fake, run } = await seed();
    home.file('bad.jsonl', '{"message":"ok"}\n{"message":\n[1,2]\n');
    const result = await run(['--map', 'bad.jsonl']);
    expect(result.code).toBe(1);
    expect(parsed(result.stdout).map((l) => [l.line, l.status, l.error])).toEqual([
      [1, 'completed', null],
      [2, 'error', 'line 2: not valid JSON'],
      [3, 'error', 'line 3: expected a JSON object'],
    ]);
    expect(result.stderr).toMatch(/axe: batch (\S+): 1 completed, 2 failed \(see axe batches show \1\)\n$/);
    const strict = await run(['--map', 'bad.jsonl', '--strict-input']);
    expect(strict).toMatchObject({ code: 2, stdout: '' });
    expect(strict.stderr).toMatch(/bad\.jsonl: line 2: not valid JSON \(--strict-input\)\n$/);
    expect(fake.requests).toHaveLength(1);
  });

  it('duplicate keys refuse the batch before anything starts, naming both lines', async () => {
    const { home, fake, run } = await seed();
    home.file('dup.jsonl', '{"id":"x","message":"a"}\n{"id":"y","message":"b"}\n{"id":"x","message":"c"}\n');
    const result = await run(['--map', 'dup.jsonl', '--key', 'id']);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toBe(
      'axe: --key id: the key "x" is on line 1 and on line 3: keys must be unique\n',
    );
    expect(fake.requests).toHaveLength(0);
  });
});

describe.concurrent('axe run --map execution', () => {
  it('keeps input order under random latencies, with a failing item among successes (exit 1)', async () => {
    const { home, fake, run } = await seed();
    const items = Array.from({ length: 12 }, (_, i) => `m${i + 1}`);
    home.file('many.jsonl', items.map((message) => `${JSON.stringify({ message })}\n`).join(''));
    let answered = 0;
    let othersDone: () => void = () => {};
    const allOthers = new Promise<void>((resolve) => {
      othersDone = resolve;
    });
    fake.respond(async (request) => {
      const text = request.lastUserText;
      // The first item is answered last of all: every other line is ready before it.
      if (text === 'm1') await allOthers;
      if (++answered === items.length - 1) othersDone();
      if (text === 'm5') return { fault: { kind: 'status', status: 400, message: 'bad item' } };
      return { text: `A:${text}`, delayMs: Math.floor(Math.random() * 60) };
    });
    const result = await run(['--map', 'many.jsonl', '--concurrency', '4']);
    expect(result.code).toBe(1);
    const out = parsed(result.stdout);
    expect(out.map((l) => l.key)).toEqual(items.map((_, i) => String(i + 1)));
    expect(out.map((l) => l.status)).toEqual(items.map((m) => (m === 'm5' ? 'error' : 'completed')));
    expect(out[4]?.error).toMatch(/bad item/);
    // The first item was answered after every other item had been sent (so, with 4 at a time,
    // after most of them had finished), yet its line came first.
    const first = fake.requests.find((r) => r.lastUserText === 'm1');
    const lastArrival = Math.max(...fake.requests.filter((r) => r !== first).map((r) => r.receivedAt));
    expect(first?.finishedAt).toBeGreaterThanOrEqual(lastArrival);
    expect(result.stderr).toMatch(/: 11 completed, 1 failed \(see axe batches show \S+\)\n$/);
  });

  it('--max-failures: no new item starts once reached, the rest are skipped, exit 4; --out-format csv to --out', async () => {
    const { home, fake, run } = await seed();
    home.file('f.txt', 'ok1\nbad2\nbad3\nok4\nok5\n');
    fake.respond((request) =>
      request.lastUserText.startsWith('bad')
        ? { fault: { kind: 'status', status: 400, message: 'refused item' } }
        : { text: 'fine' },
    );
    const result = await run([
      '--map',
      'f.txt',
      '--concurrency',
      '1',
      '--max-failures',
      '2',
      '--out',
      'out.csv',
      '--out-format',
      'csv',
    ]);
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    const csv = readFileSync(path.join(home.root, 'out.csv'), 'utf8').split('\n');
    expect(csv[0]).toBe('key,line,status,answer,output,error,usage,cost_usd,run_id,duration_ms');
    expect(csv.slice(1, -1).map((row) => row.split(',').slice(0, 3).join(','))).toEqual([
      '1,1,completed',
      '2,2,error',
      '3,3,error',
      '4,4,skipped',
      '5,5,skipped',
    ]);
    expect(fake.requests.map((r) => r.lastUserText)).toEqual(['ok1', 'bad2', 'bad3']);
    expect(result.stderr).toMatch(
      /stopped by --max-failures: 1 completed, 2 failed, 2 skipped \(axe batches resume \S+\)\n$/,
    );
  });

  it("--events: item.start and item.end with the key, beside the runs' own events", async () => {
    const { home, run } = await seed();
    home.file('k.jsonl', '{"id":"a","message":"x"}\n{"id":"b","message":"y"}\n');
    const result = await run([
      '--map',
      'k.jsonl',
      '--key',
      'id',
      '--events',
      'ev.jsonl',
      '--concurrency',
      '1',
    ]);
    expect(result.code, result.stderr).toBe(0);
    const events = lines(readFileSync(path.join(home.root, 'ev.jsonl'), 'utf8')).map(
      (line) => JSON.parse(line) as { type: string; key?: string },
    );
    const items = events.filter((e) => e.type.startsWith('item.')).map((e) => `${e.type}:${e.key}`);
    expect(items).toEqual(['item.start:a', 'item.end:a', 'item.start:b', 'item.end:b']);
    expect(events.filter((e) => e.type === 'agent.end')).toHaveLength(2);
  });
});

describe('axe batches resume', () => {
  it('after SIGKILL: every item once in the final output, no journaled item sent again; two resumes at once refused', async () => {
    const { home, fake } = await setup();
    home.agent('labeler', agentToml('labeler'));
    const items = Array.from({ length: 10 }, (_, i) => `m${i + 1}`);
    home.file('r.jsonl', items.map((message) => `${JSON.stringify({ message })}\n`).join(''));
    const env = home.env(fake.url);
    const options = { env, cwd: home.root };
    // Items 5 and 6 never get an answer: the batch stalls with 1–4 done (2 at a time).
    fake.respond((request) =>
      ['m5', 'm6'].includes(request.lastUserText)
        ? { fault: { kind: 'hang' } }
        : { text: `A:${request.lastUserText}` },
    );
    const first = startAxe(
      ['run', 'labeler', '--agents-dir', home.agentsDir, '--map', 'r.jsonl', '--concurrency', '2'],
      options,
    );
    await waitFor(() => lines(first.stdoutSoFar()).length === 4 && fake.requests.length === 6);
    first.kill('SIGKILL');
    const killed = await first.done;
    expect(killed.signal).toBe('SIGKILL');
    const id = /axe: batch (\S+): 10 items/.exec(killed.stderr)?.[1] ?? '';
    const journal = readFileSync(path.join(home.root, 'data', 'axe', 'batches', id, 'journal.jsonl'), 'utf8');
    // In the order the items finished; each one once.
    expect(
      lines(journal)
        .map((l) => (JSON.parse(l) as Line).key)
        .sort(),
    ).toEqual(['1', '2', '3', '4']);

    // A resume that stalls too holds the batch: a second one is refused, naming it.
    fake.reset();
    fake.respond((request) =>
      request.lastUserText === 'm5' ? { fault: { kind: 'hang' } } : { text: `B:${request.lastUserText}` },
    );
    const holder = startAxe(['batches', 'resume', id], options);
    await waitFor(() => fake.requests.some((r) => r.lastUserText === 'm5'));
    const second = await runAxe(['batches', 'resume', 'last'], options);
    expect(second).toMatchObject({ code: 2, stdout: '' });
    expect(second.stderr).toBe(`axe: batch ${id} is being run by process ${holder.pid}\n`);
    holder.kill('SIGKILL');
    await holder.done;

    fake.reset();
    fake.respond((request) => ({ text: `C:${request.lastUserText}` }));
    const resumed = await runAxe(['batches', 'resume', id], options);
    expect(resumed.code, resumed.stderr).toBe(0);
    const out = parsed(resumed.stdout);
    expect(out.map((l) => l.key)).toEqual(items.map((_, i) => String(i + 1)));
    expect(out.slice(0, 4).map((l) => l.answer)).toEqual(['A:m1', 'A:m2', 'A:m3', 'A:m4']);
    expect(out[4]?.answer).toBe('C:m5');
    // Only the items without a journaled result reached the provider.
    expect(fake.requests.map((r) => r.lastUserText).sort()).not.toContain('m1');
    expect(new Set(fake.requests.map((r) => r.lastUserText))).not.toContain('m4');
    expect(fake.requests.map((r) => r.lastUserText)).toContain('m5');
    const show = await runAxe(['batches', 'show', id, '--json'], options);
    expect(JSON.parse(show.stdout)).toMatchObject({ id, items: 10, counts: { completed: 10 } });
    const results = await runAxe(['batches', 'show', 'last', '--results'], options);
    expect(parsed(results.stdout).map((l) => l.key)).toEqual(items.map((_, i) => String(i + 1)));
  });

  it('refuses a resume whose input changed since (exit 2), unless --force', async () => {
    const { home, fake, run } = await seed();
    const file = home.file('c.txt', 'one\ntwo\n');
    const first = await run(['--map', 'c.txt']);
    expect(first.code).toBe(0);
    writeFileSync(file, 'one\nthree\n');
    const options = { env: home.env(fake.url), cwd: home.root };
    const refused = await runAxe(['batches', 'resume', 'last'], options);
    expect(refused).toMatchObject({ code: 2, stdout: '' });
    expect(refused.stderr).toMatch(
      /^axe: batch \S+: its input .*c\.txt changed since the batch started \(--force resumes it anyway\)\n$/,
    );
    const forced = await runAxe(['batches', 'resume', 'last', '--force'], options);
    expect(forced.code).toBe(0);
    expect(fake.requests).toHaveLength(2);
  });
});

describe.concurrent('axe run --map caps', () => {
  it('--max-cost with known prices: no new item once spent, overrun within the calls in flight, the rest skipped, exit 4', async () => {
    const { home, fake, run } = await seed(['[params]', 'max_tokens = 5']);
    // $1,000 per million tokens: each call (10 in, 5 out) costs $0.015.
    home.file('config/axe/config.toml', '[prices."anthropic/claude-test"]\ninput = 1000\noutput = 1000\n');
    home.file('many.txt', `${Array.from({ length: 20 }, (_, i) => `item ${i + 1}`).join('\n')}\n`);
    const result = await run(['--map', 'many.txt', '--concurrency', '2', '--max-cost', '0.05']);
    expect(result.code, result.stderr).toBe(4);
    const out = parsed(result.stdout) as (Line & { cost_usd: number | null })[];
    expect(out).toHaveLength(20);
    const ran = out.filter((l) => l.status !== 'skipped');
    expect(ran.length).toBeGreaterThanOrEqual(3);
    expect(out.at(-1)?.status).toBe('skipped');
    for (const line of ran) expect(['completed', 'budget_exceeded']).toContain(line.status);
    const spent = ran.reduce((sum, l) => sum + (l.cost_usd ?? 0), 0);
    expect(out.find((l) => l.status === 'completed')?.cost_usd).toBeCloseTo(0.015, 6);
    // Over the cap by at most the calls in flight when it was crossed (2 at a time).
    expect(spent).toBeLessThanOrEqual(0.05 + 2 * 0.015 + 1e-9);
    expect(fake.requests.length).toBe(ran.filter((l) => l.status === 'completed').length);
    expect(result.stderr).toMatch(
      /stopped by --max-cost: \d+ completed, \d+ failed, \d+ skipped \(axe batches resume \S+\)\n$/,
    );
  });

  it('--max-cost refuses a batch whose model has no known price before anything starts', async () => {
    const { home, fake, run } = await seed();
    home.file('one.txt', 'x\n');
    const result = await run(['--map', 'one.txt', '--max-cost', '1']);
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toMatch(/no price known for anthropic\/claude-test, so a cost cap cannot be kept/);
    expect(fake.requests).toHaveLength(0);
    // Nothing is left behind to list or resume.
    const list = await runAxe(['batches', 'list'], { env: home.env(fake.url) });
    expect(list.stdout).toBe('no batches\n');
  });
});

describe('axe run --map and Ctrl-C', () => {
  it('once: nothing new starts, running items finish and are kept, exit 130 naming the resume; the resume runs the rest', async () => {
    const { home, fake } = await setup();
    home.agent('labeler', agentToml('labeler'));
    home.file('s.txt', 'm1\nm2\nm3\nm4\nm5\nm6\n');
    const options = { env: home.env(fake.url), cwd: home.root };
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    fake.respond(async (request) => {
      await gate;
      return { text: `A:${request.lastUserText}` };
    });
    const batch = startAxe(
      ['run', 'labeler', '--agents-dir', home.agentsDir, '--map', 's.txt', '--concurrency', '2'],
      options,
    );
    await waitFor(() => fake.requests.length === 2);
    batch.kill('SIGINT');
    await waitFor(() => batch.stderrSoFar().includes('no new item starts'));
    release();
    const result = await batch.done;
    expect(result.code).toBe(130);
    expect(parsed(result.stdout).map((l) => l.status)).toEqual([
      'completed',
      'completed',
      'skipped',
      'skipped',
      'skipped',
      'skipped',
    ]);
    const id = /axe: batch (\S+): 6 items/.exec(result.stderr)?.[1] ?? '';
    expect(result.stderr).toMatch(
      new RegExp(
        `axe: batch ${id}: interrupted: 2 completed, 0 failed, 4 skipped \\(axe batches resume ${id}\\)\\n$`,
      ),
    );
    fake.reset();
    fake.respond((request) => ({ text: `B:${request.lastUserText}` }));
    const resumed = await runAxe(['batches', 'resume', id], options);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(parsed(resumed.stdout).map((l) => l.answer)).toEqual([
      'A:m1',
      'A:m2',
      'B:m3',
      'B:m4',
      'B:m5',
      'B:m6',
    ]);
    expect(fake.requests.map((r) => r.lastUserText).sort()).toEqual(['m3', 'm4', 'm5', 'm6']);
  });
});

describe('axe run --map and rate limits', () => {
  it('--rpm holds every item to one rate per provider (the fake server stamps the arrivals)', async () => {
    const { home, fake, run } = await seed();
    home.file('r.txt', 'a\nb\nc\n');
    const result = await run(['--map', 'r.txt', '--concurrency', '3', '--rpm', '60']);
    expect(result.code, result.stderr).toBe(0);
    const arrivals = fake.requests.map((r) => r.receivedAt).sort((x, y) => x - y);
    expect(arrivals).toHaveLength(3);
    // 60 a minute is one a second, shared by the three items that run at once.
    expect((arrivals[2] ?? 0) - (arrivals[0] ?? 0)).toBeGreaterThanOrEqual(1900);
  });
});

describe('axe run --map with a cassette', () => {
  it('--record writes one cassette for the whole batch; --replay serves the batch from it with no server; --progress always draws the line', async () => {
    const { home, fake, run } = await seed();
    home.file('p.txt', 'one\ntwo\nthree\n');
    const recorded = await run([
      '--map',
      'p.txt',
      '--record',
      'batch.cassette.jsonl',
      '--progress',
      'always',
    ]);
    expect(recorded.code, recorded.stderr).toBe(0);
    expect(recorded.stderr).toMatch(/\d\/3 done, 0 failed, \d running, \d queued/);
    expect(lines(readFileSync(path.join(home.root, 'batch.cassette.jsonl'), 'utf8'))).toHaveLength(3);
    const replayed = await runAxe(
      [
        'run',
        'labeler',
        '--agents-dir',
        home.agentsDir,
        '--map',
        'p.txt',
        '--replay',
        'batch.cassette.jsonl',
      ],
      { env: home.env(), cwd: home.root },
    );
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(parsed(replayed.stdout).map((l) => l.answer)).toEqual(['A:ONE', 'A:TWO', 'A:THREE']);
    expect(fake.requests).toHaveLength(3);
  });
});
