import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CassettePlayer } from '../../internal/cassette/cassette.js';
import { ConfigError } from '../../internal/errors.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'axe-cassette-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const usage = { inputTokens: 1, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 };
const response = { content: 'hi', toolCalls: [], stopReason: 'end_turn', usage, model: 'm', retries: 0 };

function cassette(name: string, ...entries: unknown[]): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''));
  return file;
}

describe('CassettePlayer', () => {
  it('loads well-formed answers and errors', async () => {
    const error = { message: 'overloaded', details: { category: 'overloaded', provider: 'anthropic' } };
    const file = cassette(
      'good.jsonl',
      { key: 'a', agent: 'lead', provider: 'anthropic', request: {}, response, deltas: ['h', 'i'] },
      { key: 'b', agent: 'lead', provider: 'anthropic', request: {}, error },
    );
    await expect(CassettePlayer.open(file)).resolves.toBeInstanceOf(CassettePlayer);
  });

  it.each([
    ['a response without tool calls', { ...response, toolCalls: undefined }],
    ['a response with a malformed tool call', { ...response, toolCalls: [{ id: 'c1', name: 'x' }] }],
    ['a response without usage counts', { ...response, usage: { inputTokens: 1 } }],
  ])('refuses %s, naming the file and line (exit 2)', async (_what, bad) => {
    const entry = { key: 'a', agent: 'lead', provider: 'anthropic', request: {} };
    const file = cassette('bad.jsonl', { ...entry, response }, { ...entry, response: bad });
    const thrown = await CassettePlayer.open(file).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as ConfigError).message).toBe(`--replay: ${file}:2: not a cassette entry`);
  });
});
