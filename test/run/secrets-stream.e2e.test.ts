import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import eventSchema from '../../schemas/run-event.schema.json' with { type: 'json' };
import { agentToml } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/** A key the model echoes back in pieces is masked whole wherever axe writes the streamed text. */
const setup = e2eHomes();
const KEY = 'sk-ant-echoed-key-0123456789';

describe.concurrent('secrets in streamed text', () => {
  it('a key split across text deltas: masked on stdout with --stream and in the --events file', async () => {
    const { home, fake } = await setup();
    home.agent('a', agentToml('a'));
    // Streamed in three deltas (`auth=sk-ant`, `-echoed-key`, `-0123456789`), each on its own.
    fake.respond((request) => ({ text: `auth=${request.headers['x-api-key']}`, chunkDelayMs: 5 }));
    const env = home.env(fake.url, { ANTHROPIC_API_KEY: KEY });
    const events = path.join(home.root, 'events.jsonl');
    const base = ['run', 'a', '--agents-dir', home.agentsDir, '-p', 'x'];

    const streamed = await runAxe([...base, '--stream', '--events', events], { env });
    expect(fake.requests[0]?.headers['x-api-key']).toBe(KEY);
    expect(streamed).toMatchObject({ code: 0, stdout: 'auth=***' });
    const log = readFileSync(events, 'utf8');
    const all = log
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line));
    const validate = new Ajv2020({ strict: false }).compile(eventSchema);
    for (const event of all) expect(validate(event), JSON.stringify(validate.errors)).toBe(true);
    // `sk-ant` could begin the key: held back until the key is whole, then written masked.
    const deltas = all.filter((event) => event.type === 'text.delta');
    expect(deltas.map((event) => event.text)).toEqual(['auth=', '***']);
    // All the text is out before the turn's end.
    const turnEnd = all.findIndex((event) => event.type === 'turn.end');
    expect(all.findLastIndex((event) => event.type === 'text.delta')).toBeLessThan(turnEnd);
    for (const event of deltas) expect(event).toMatchObject({ path: 'a', agent: 'a', depth: 0 });
    for (const text of [streamed.stdout, streamed.stderr, log]) expect(text).not.toContain(KEY);

    // To stderr (`--events -`) as well.
    const toStderr = await runAxe([...base, '--stream', '--events', '-'], { env });
    expect(toStderr).toMatchObject({ code: 0, stdout: 'auth=***' });
    expect(toStderr.stderr).toContain('"text":"auth=');
    expect(toStderr.stderr).not.toContain(KEY);

    // Not streamed, the same.
    expect(await runAxe(base, { env })).toMatchObject({ code: 0, stdout: 'auth=***' });

    // A cassette keeps the deltas masked as one stream; replayed, they give the same masked text.
    const cassette = path.join(home.root, 'c.jsonl');
    expect(await runAxe([...base, '--stream', '--record', cassette], { env })).toMatchObject({ code: 0 });
    const recorded = readFileSync(cassette, 'utf8');
    expect(recorded).not.toMatch(/sk-ant|echoed-key|0123456789/);
    expect(JSON.parse(recorded).deltas).toEqual(['auth=', '***']);
    expect(await runAxe([...base, '--stream', '--replay', cassette], { env })).toMatchObject({
      code: 0,
      stdout: 'auth=***',
    });
  });

  it('a secret that begins another: the longer is masked whole, streamed or not', async () => {
    const { home, fake } = await setup();
    home.agent('a', agentToml('a'));
    const long = 'sk-ant-api03-Zx9LongSecretPart';
    fake.respond((request) => ({ text: `auth=${request.headers['x-api-key']} short=sk-ant-api03.` }));
    const env = home.env(fake.url, { A_TOKEN: 'sk-ant-api03', ANTHROPIC_API_KEY: long });
    const base = ['run', 'a', '--agents-dir', home.agentsDir, '-p', 'x'];
    for (const extra of [[], ['--stream'], ['--stream', '--events', '-']]) {
      const run = await runAxe([...base, ...extra], { env });
      expect(run).toMatchObject({ code: 0, stdout: 'auth=*** short=***.' });
      expect(run.stderr).not.toContain('Zx9Long');
      expect(run.stderr).not.toContain('sk-ant-api03');
    }
  });
});
