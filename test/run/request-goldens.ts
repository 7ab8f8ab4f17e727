import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { RecordedRequest } from '../fake-llm/types.js';

/**
 * Request goldens: what axe sent to the server for a run of Go-only agent files, byte for byte
 * (bodies as JSON, in a stable order since parallel sub-agents may arrive in any order). The
 * files under `goldens/` were recorded before the sub-agent work began; a change that alters a
 * Go-only request fails here. `AXE_UPDATE_GOLDENS=1` rewrites them, for a deliberate change.
 */
const DIR = path.join(path.dirname(new URL(import.meta.url).pathname), 'goldens');

export function expectRequestGolden(
  name: string,
  requests: readonly RecordedRequest[],
  mask: (text: string) => string,
): void {
  const sent = requests
    .map((request) => mask(JSON.stringify({ path: request.path, body: request.body })))
    .sort();
  const file = path.join(DIR, `${name}.requests.json`);
  const text = `${JSON.stringify(
    sent.map((line) => JSON.parse(line)),
    null,
    1,
  )}\n`;
  if (process.env.AXE_UPDATE_GOLDENS === '1') {
    mkdirSync(DIR, { recursive: true });
    writeFileSync(file, text);
  }
  if (!existsSync(file)) throw new Error(`${file} is missing (AXE_UPDATE_GOLDENS=1 records it)`);
  expect(text).toBe(readFileSync(file, 'utf8'));
}
