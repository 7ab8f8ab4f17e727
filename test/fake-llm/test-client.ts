import { signV4 } from '../../internal/provider/sigv4.js';
import { FAKE_AWS_ACCESS_KEY_ID, FAKE_AWS_SECRET_ACCESS_KEY } from './bedrock-validate.js';

/** Plain-fetch helpers for the fake server's own tests. */
export interface Sent {
  status: number;
  headers: Headers;
  text: string;
  json: unknown;
}

export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Sent> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}

/** A Bedrock Converse request for `model`, SigV4-signed as axe signs it (with `secret`, to test a bad one). */
export function postSignedConverse(
  fakeUrl: string,
  model: string,
  body: unknown,
  secret = FAKE_AWS_SECRET_ACCESS_KEY,
): Promise<Sent> {
  const url = `${fakeUrl}/model/${encodeURIComponent(model)}/converse`;
  const text = JSON.stringify(body);
  const headers = signV4({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json' },
    body: text,
    region: 'us-east-1',
    service: 'bedrock',
    credentials: { accessKeyId: FAKE_AWS_ACCESS_KEY_ID, secretAccessKey: secret },
    date: new Date(),
  });
  return post(url, text, headers);
}

export interface SseEvent {
  event?: string;
  data: string;
}

/** Splits an SSE body into events (comment lines dropped). */
export function parseSse(text: string): SseEvent[] {
  return text
    .split(/\r?\n\r?\n/)
    .filter((block) => block.trim() !== '')
    .flatMap((block) => {
      const lines = block.split(/\r?\n/).filter((l) => !l.startsWith(':'));
      if (lines.length === 0) return [];
      const event = lines.find((l) => l.startsWith('event: '))?.slice(7);
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice(6))
        .join('\n');
      return [event === undefined ? { data } : { event, data }];
    });
}

export function parseNdjson(text: string): unknown[] {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as unknown);
}

/** Reads a property path of an unknown JSON value, for assertions. */
export function at(value: unknown, ...path: (string | number)[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}
