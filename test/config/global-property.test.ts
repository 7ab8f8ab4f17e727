import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { stringify } from 'smol-toml';
import { describe, it } from 'vitest';
import { loadGlobalConfig } from '../../internal/config/global.js';
import { ConfigError } from '../../internal/errors.js';
import { tempDir } from '../agent/helpers.js';

const dir = tempDir();
const SEED =
  '[providers.anthropic]\napi_key = "k"\nbase_url = "http://127.0.0.1:1"\n\n[providers.my-vllm]\napi = "openai"\nheaders = { X = "y" }\n';

async function check(content: string | Uint8Array): Promise<void> {
  writeFileSync(join(dir, 'config.toml'), content);
  try {
    await loadGlobalConfig(dir);
  } catch (error) {
    if (!(error instanceof ConfigError) || error.message.includes('\n')) throw error;
  }
}

const key = fc.oneof(
  fc.constantFrom('providers', 'api_key', 'base_url', 'api', 'headers', '__proto__', 'constructor'),
  fc.string({ maxLength: 6 }),
);
const value = fc.letrec((tie) => ({
  any: fc.oneof(
    { depthSize: 'small' },
    fc.string({ maxLength: 10 }),
    fc.integer(),
    fc.boolean(),
    fc.array(tie('any'), { maxLength: 2 }),
    tie('table'),
  ),
  table: fc.dictionary(key, tie('any'), { maxKeys: 4 }),
})).table;

describe('loadGlobalConfig under random input (fast-check)', () => {
  it('fails only with one-line ConfigErrors on random, mutated and structured files', async () => {
    await fc.assert(fc.asyncProperty(fc.uint8Array({ maxLength: 120 }), check), { numRuns: 300 });
    await fc.assert(
      fc.asyncProperty(fc.nat(), fc.nat({ max: 10 }), fc.string({ maxLength: 6 }), (at, length, piece) => {
        const position = at % (SEED.length + 1);
        return check(SEED.slice(0, position) + piece + SEED.slice(position + length));
      }),
      { numRuns: 400 },
    );
    await fc.assert(
      fc.asyncProperty(value, (table) => check(stringify({ providers: table }))),
      { numRuns: 300 },
    );
  }, 15_000);
});
