import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { signV4 } from '../../internal/provider/sigv4.js';
import { FAKE_AWS_ACCESS_KEY_ID, FAKE_AWS_SECRET_ACCESS_KEY } from './bedrock-validate.js';
import { startFakeLlm } from './server.js';
import { at, parseNdjson, parseSse, post } from './test-client.js';
import type { FakeLlm, RecordedRequest, ScriptedReply, Wire } from './types.js';

let fake: FakeLlm;
beforeAll(async () => {
  fake = await startFakeLlm();
});
afterAll(() => fake.close());
beforeEach(() => fake.reset());

/** The smallest valid request of each wire, JSON or streamed. */
function minimal(
  wire: Wire,
  stream = false,
): { url: string; body: unknown; headers: Record<string, string> } {
  switch (wire) {
    case 'anthropic':
      return {
        url: `${fake.url}/v1/messages`,
        body: { model: 'claude-x', max_tokens: 10, stream, messages: [{ role: 'user', content: 'hi' }] },
        headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      };
    case 'openai':
      return {
        url: `${fake.url}/v1/chat/completions`,
        body: { model: 'gpt-x', stream, messages: [{ role: 'user', content: 'hi' }] },
        headers: { authorization: 'Bearer k' },
      };
    case 'ollama':
      return {
        url: `${fake.url}/api/chat`,
        body: { model: 'llama', stream, messages: [{ role: 'user', content: 'hi' }] },
        headers: {},
      };
    case 'google':
      return {
        url: `${fake.url}/v1beta/models/gemini-x:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
        body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
        headers: { 'x-goog-api-key': 'k' },
      };
    case 'responses':
      return {
        url: `${fake.url}/v1/responses`,
        body: { model: 'gpt-x', stream, input: 'hi' },
        headers: { authorization: 'Bearer k' },
      };
    case 'bedrock': {
      const url = `${fake.url}/model/anthropic.claude-x%3A0/converse`;
      const body = { messages: [{ role: 'user', content: [{ text: 'hi' }] }] };
      const headers = signV4({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        region: 'us-east-1',
        service: 'bedrock',
        credentials: { accessKeyId: FAKE_AWS_ACCESS_KEY_ID, secretAccessKey: FAKE_AWS_SECRET_ACCESS_KEY },
        date: new Date(),
      });
      return { url, body, headers };
    }
  }
}

function send(wire: Wire, reply: ScriptedReply, stream = false, signal?: AbortSignal) {
  fake.enqueue(reply);
  const { url, body, headers } = minimal(wire, stream);
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    ...(signal ? { signal } : {}),
  });
}

/**
 * Sends a request and aborts it once the server has it (never by a timer: on a busy machine a timer
 * could fire before the request arrives, and the server would have nothing to record).
 */
async function abortOnceReceived(wire: Wire, reply: ScriptedReply): Promise<Response> {
  const controller = new AbortController();
  const sent = send(wire, reply, false, controller.signal);
  sent.catch(() => {});
  await until(() => fake.requests.length > 0);
  controller.abort();
  return sent;
}

/** Polls `check`; the bound only keeps a broken server from hanging the test. */
async function until(check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

const first = (): RecordedRequest => fake.requests[0] as RecordedRequest;
const WIRES: Wire[] = ['anthropic', 'openai', 'ollama', 'google', 'responses', 'bedrock'];

describe('status faults', () => {
  it('gives Anthropic 429 rate_limit_error with retry headers and the request-id', async () => {
    const res = await send('anthropic', {
      fault: { kind: 'status', status: 429, headers: { 'retry-after': '2', 'x-should-retry': 'true' } },
    });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('2');
    expect(res.headers.get('x-should-retry')).toBe('true');
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    const body = (await res.json()) as unknown;
    expect(at(body, 'type')).toBe('error');
    expect(at(body, 'error', 'type')).toBe('rate_limit_error');
    expect(first().rejection).toBeUndefined();
  });

  it('gives Anthropic 529 overloaded_error', async () => {
    const res = await send('anthropic', { fault: { kind: 'status', status: 529 } });
    expect(res.status).toBe(529);
    expect(at(await res.json(), 'error')).toEqual({ type: 'overloaded_error', message: 'Overloaded' });
  });

  it.each([
    [401, 'invalid_request_error', 'invalid_api_key'],
    [429, 'requests', 'rate_limit_exceeded'],
    [500, 'server_error', null],
  ])('gives OpenAI %i as {error:{message,type,param,code}}', async (status, type, code) => {
    const res = await send('openai', {
      fault: { kind: 'status', status, message: 'nope', headers: { 'retry-after-ms': '150' } },
    });
    expect(res.status).toBe(status);
    expect(res.headers.get('retry-after-ms')).toBe('150');
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(await res.json()).toEqual({ error: { message: 'nope', type, param: null, code } });
  });

  it('gives Ollama {"error": …}', async () => {
    const res = await send('ollama', {
      fault: { kind: 'status', status: 404, message: "model 'x' not found" },
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "model 'x' not found" });
  });

  it.each([
    [403, 'PERMISSION_DENIED'],
    [413, 'INVALID_ARGUMENT'],
    [429, 'RESOURCE_EXHAUSTED'],
    [503, 'UNAVAILABLE'],
  ])('gives Gemini %i as {error:{code,message,status}}', async (status, name) => {
    const res = await send('google', { fault: { kind: 'status', status, message: 'm' } });
    expect(res.status).toBe(status);
    expect(await res.json()).toEqual({ error: { code: status, message: 'm', status: name } });
  });
});

describe('connection faults', () => {
  it('hangs until the client gives up, and records the abort', async () => {
    await expect(abortOnceReceived('openai', { fault: { kind: 'hang' } })).rejects.toThrow();
    // A hang never ends on its own: the request is finished by the abort alone.
    await until(() => first().aborted);
    expect(first().finishedAt).toBeGreaterThanOrEqual(first().receivedAt);
  });

  it('records a client abort during delayMs and never answers it', async () => {
    await expect(abortOnceReceived('anthropic', { text: 'late', delayMs: 600_000 })).rejects.toThrow();
    // The answer is due in ten minutes: what finishes the request now is the abort.
    await until(() => first().aborted);
    expect(first().finishedAt).toBeGreaterThanOrEqual(first().receivedAt);
  });

  it('waits delayMs before answering', async () => {
    const started = Date.now();
    const res = await send('ollama', { text: 'ok', delayMs: 60 });
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(55);
    expect(first().aborted).toBe(false);
  });

  it.each(WIRES)('sends a 200 body that is not JSON (%s)', async (wire) => {
    const res = await send(wire, { text: 'x', fault: { kind: 'invalid-json' } });
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(() => JSON.parse(text)).toThrow();
  });

  it('sends a stream whose first event is not JSON', async () => {
    const res = await send('anthropic', { text: 'x', fault: { kind: 'invalid-json' } }, true);
    const [event] = parseSse(await res.text());
    expect(event?.event).toBe('message_start');
    expect(() => JSON.parse(event?.data ?? '')).toThrow();
  });

  it('truncates a JSON body: the client sees headers, then the connection dies', async () => {
    const res = await send('openai', { text: 'a reasonably long answer', fault: { kind: 'truncate' } });
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
    expect(first().aborted).toBe(false);
  });

  it('truncates a stream mid-way', async () => {
    const res = await send('google', { text: 'a reasonably long answer', fault: { kind: 'truncate' } }, true);
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
  });

  it('resets the connection without a response', async () => {
    await expect(send('anthropic', { text: 'x', fault: { kind: 'reset' } })).rejects.toThrow(/fetch failed/);
    await until(() => first().finishedAt !== undefined);
    expect(first().aborted).toBe(false);
  });
});

describe('mid-stream errors', () => {
  it('Anthropic: some events, then event: error', async () => {
    const res = await send(
      'anthropic',
      { text: 'partial answer', fault: { kind: 'mid-stream-error', message: 'Overloaded' } },
      true,
    );
    const events = parseSse(await res.text());
    expect(events[0]?.event).toBe('message_start');
    expect(events.at(-1)?.event).toBe('error');
    expect(JSON.parse(events.at(-1)?.data ?? '')).toEqual({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
    });
    expect(events.some((e) => e.event === 'message_stop')).toBe(false);
  });

  it('OpenAI: chunks, then an error object in a data line and no [DONE]', async () => {
    const res = await send(
      'openai',
      { text: 'partial answer', fault: { kind: 'mid-stream-error', message: 'boom' } },
      true,
    );
    const events = parseSse(await res.text());
    expect(events.some((e) => e.data === '[DONE]')).toBe(false);
    expect(at(JSON.parse(events.at(-1)?.data ?? ''), 'error', 'message')).toBe('boom');
    expect(at(JSON.parse(events[0]?.data ?? ''), 'object')).toBe('chat.completion.chunk');
  });

  it('Ollama: lines, then {"error": …}', async () => {
    const res = await send(
      'ollama',
      { text: 'partial answer', fault: { kind: 'mid-stream-error', message: 'boom' } },
      true,
    );
    const lines = parseNdjson(await res.text());
    expect(at(lines[0], 'done')).toBe(false);
    expect(lines.at(-1)).toEqual({ error: 'boom' });
  });

  it('Gemini: chunks, then an error object', async () => {
    const res = await send(
      'google',
      { text: 'partial answer', fault: { kind: 'mid-stream-error', message: 'boom' } },
      true,
    );
    const events = parseSse(await res.text());
    expect(events.length).toBeGreaterThan(1);
    expect(JSON.parse(events.at(-1)?.data ?? '')).toEqual({
      error: { code: 500, message: 'boom', status: 'INTERNAL' },
    });
  });
});

describe('scripting', () => {
  it('waits chunkDelayMs between streamed events', async () => {
    const started = Date.now();
    const res = await send('openai', { text: 'abcdef', chunkDelayMs: 15 }, true);
    const events = parseSse(await res.text());
    // comment + role chunk + 3 text deltas + finish + [DONE] = 7 frames, 6 waits
    expect(events.length).toBe(6);
    expect(Date.now() - started).toBeGreaterThanOrEqual(6 * 15 - 5);
  });

  it('marks a stream the client abandons as aborted and stops writing', async () => {
    const controller = new AbortController();
    const res = await send('anthropic', { text: 'x'.repeat(30), chunkDelayMs: 30 }, true, controller.signal);
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await until(() => first().aborted);
  });

  it('routes with a responder, which takes precedence over the queue', async () => {
    fake.enqueue({ text: 'from queue' });
    fake.respond((request) => ({ text: `echo: ${request.lastUserText}` }));
    const { url, body, headers } = minimal('ollama');
    const res = await post(url, body, headers);
    expect(at(res.json, 'message', 'content')).toBe('echo: hi');
  });

  it('answers 500 when no reply is scripted', async () => {
    const { url, body, headers } = minimal('anthropic');
    const res = await post(url, body, headers);
    expect(res.status).toBe(500);
    expect(String(at(res.json, 'error', 'message'))).toMatch(/no reply scripted/);
  });

  it('close() ends hanging connections', async () => {
    const own = await startFakeLlm();
    own.enqueue({ fault: { kind: 'hang' } });
    const pending = fetch(`${own.url}/api/chat`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', stream: false }),
    });
    await until(() => own.requests.length === 1);
    // The request hangs for ever: close() ends at all only by ending it.
    await own.close();
    await expect(pending).rejects.toThrow();
    await until(() => own.requests[0]?.finishedAt !== undefined);
  });
});
