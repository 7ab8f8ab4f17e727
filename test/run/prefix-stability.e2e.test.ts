import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAKE_AWS_ACCESS_KEY_ID, FAKE_AWS_SECRET_ACCESS_KEY } from '../fake-llm/bedrock-validate.js';
import type { RecordedRequest, ScriptedReply, Wire } from '../fake-llm/types.js';
import { e2eHomes, runAxe, type TempHome } from './cli.js';

/**
 * The condition of every prompt cache: from one turn of a tool loop to the next, the request is
 * the previous one plus the new messages, byte for byte — same keys in the same order, same tools,
 * same system prompt, no per-turn value anywhere but in the appended messages. Checked on the raw
 * bytes axe sent, on every wire, over a 10-turn loop. Anthropic's and Bedrock's breakpoints move
 * with the newest message by design (the cache ignores them), so they are taken out first.
 */

const TURNS = 10;

/** Nine tool calls (the arguments change every turn), then the answer. */
function loop(request: RecordedRequest): ScriptedReply {
  const done = request.toolResults.length;
  return done < TURNS - 1
    ? { toolCalls: [{ name: 'list_directory', arguments: { path: done % 2 ? '.' : 'sub' } }] }
    : { text: 'done' };
}

const MESSAGES_KEY: Record<Wire, string> = {
  anthropic: 'messages',
  bedrock: 'messages',
  openai: 'messages',
  ollama: 'messages',
  google: 'contents',
  responses: 'input',
};

/** Anthropic's `cache_control` keys and Bedrock's `cachePoint` blocks, wherever they are. */
function withoutBreakpoints(value: unknown): unknown {
  if (Array.isArray(value)) {
    return value
      .filter((item) => !(item !== null && typeof item === 'object' && 'cachePoint' in item))
      .map(withoutBreakpoints);
  }
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'cache_control')
      .map(([key, item]) => [key, withoutBreakpoints(item)]),
  );
}

/** The bytes compared: as sent, or re-serialised without breakpoints (same key order). */
function bytesOf(request: RecordedRequest): string {
  const explicit = request.wire === 'anthropic' || request.wire === 'bedrock';
  return explicit ? JSON.stringify(withoutBreakpoints(JSON.parse(request.text))) : request.text;
}

/** The request cut where its conversation ends: before the array's `]`, and what follows it. */
function split(text: string, key: string): { head: string; tail: string } {
  const messages = JSON.stringify((JSON.parse(text) as Record<string, unknown>)[key]);
  const at = text.indexOf(`"${key}":${messages}`);
  if (at === -1) throw new Error(`"${key}" is not serialised as JSON.stringify would: ${text.slice(0, 200)}`);
  const end = at + key.length + 3 + messages.length - 1;
  return { head: text.slice(0, end), tail: text.slice(end + 1) };
}

interface WireCase {
  wire: Wire;
  model: string;
  env: (home: TempHome, url: string) => NodeJS.ProcessEnv;
  config?: (url: string) => string;
}

const CASES: WireCase[] = [
  { wire: 'anthropic', model: 'anthropic/claude-sonnet-4-5', env: (home, url) => home.env(url) },
  { wire: 'openai', model: 'openai/gpt-5', env: (home, url) => home.env(url) },
  { wire: 'ollama', model: 'ollama/llama3', env: (home, url) => home.env(url) },
  {
    wire: 'google',
    model: 'google/gemini-2.5-flash',
    env: (home, url) => home.env(url, { AXE_GOOGLE_BASE_URL: url, GEMINI_API_KEY: 'test-key' }),
  },
  {
    wire: 'responses',
    model: 'myresp/gpt-5',
    env: (home, url) => home.env(url, { MYRESP_API_KEY: 'test-key' }),
    config: (url) => `[providers.myresp]\nbase_url = "${url}/v1"\napi = "responses"\n`,
  },
  {
    wire: 'bedrock',
    model: 'bedrock/anthropic.claude-sonnet-4-5-v1:0',
    env: (home, url) =>
      home.env(undefined, {
        AWS_ACCESS_KEY_ID: FAKE_AWS_ACCESS_KEY_ID,
        AWS_SECRET_ACCESS_KEY: FAKE_AWS_SECRET_ACCESS_KEY,
        AWS_REGION: 'us-east-1',
        AXE_BEDROCK_BASE_URL: url,
      }),
  },
];

/** Each case's own home and fake server, whose prompt cache is on. */
const setup = e2eHomes({ cache: true });

describe.concurrent('byte-stable request prefixes over a 10-turn tool loop', () => {
  for (const wireCase of CASES) {
    it(wireCase.wire, async () => {
      const { home, fake } = await setup();
      if (wireCase.config) writeFileSync(path.join(home.configDir, 'config.toml'), wireCase.config(fake.url));
      home.file('work/sub/b.txt', 'b');
      writeFileSync(
        path.join(home.agentsDir, 'looper.md'),
        `---\nname: looper\nmodel: ${wireCase.model}\ntools: list_directory\n---\n${'Follow the plan step by step. '.repeat(200)}\n`,
      );
      fake.respond(loop);
      const work = path.join(home.root, 'work');
      const result = await runAxe(
        ['run', 'looper', '--agents-dir', home.agentsDir, '-p', 'go', '--workdir', work],
        {
          env: wireCase.env(home, fake.url),
        },
      );
      expect(result).toMatchObject({ code: 0, stdout: 'done', stderr: '' });
      expect(fake.requests).toHaveLength(TURNS);
      expect(fake.rejections).toEqual([]);
      const key = MESSAGES_KEY[wireCase.wire];
      for (let i = 1; i < TURNS; i++) {
        const before = split(bytesOf(fake.requests[i - 1] as RecordedRequest), key);
        const after = bytesOf(fake.requests[i] as RecordedRequest);
        expect(after.startsWith(`${before.head},`), `turn ${i + 1} starts with turn ${i}'s request`).toBe(
          true,
        );
        expect(split(after, key).tail, `turn ${i + 1} ends as turn ${i}'s request`).toBe(before.tail);
      }
      // What the stable prefix buys (Ollama has no prompt cache): the last turn reads most of its prompt.
      const last = fake.requests.at(-1)?.cache;
      if (wireCase.wire === 'ollama') expect(last).toBeUndefined();
      else
        expect(
          (last?.read ?? 0) / ((last?.read ?? 0) + (last?.write ?? 0) + (last?.uncached ?? 0)),
        ).toBeGreaterThan(0.8);
    });
  }
});
