import type { Hash } from 'node:crypto';
import { ConfigError } from '../errors.js';
import { type MapFormat, type RawItem, readItems } from './input.js';
import { itemKey } from './items.js';

/** The checks a batch's input passes before anything of it runs, locally or on a queue. */
export interface InputChecks {
  /** `--strict-input`: a malformed item refuses the batch. */
  strictInput: boolean;
  /** `--key FIELD`: its values must be unique. */
  keyField?: string;
  /** How the input is named in a refusal: its path, or `stdin`. */
  label: string;
}

/**
 * Every item of a batch's input, in order, each checked as it passes: with `--strict-input` a
 * malformed item, and under `--key` a key seen before, refuse the whole batch (ConfigError, exit 2).
 */
export async function* checkedItems(
  file: string,
  format: MapFormat,
  checks: InputChecks,
  digest?: Hash,
): AsyncGenerator<RawItem> {
  const seen = new Map<string, number>();
  for await (const raw of readItems(file, format, digest)) {
    if (raw.error !== undefined && checks.strictInput) {
      throw new ConfigError(`--map: ${checks.label}: ${raw.error} (--strict-input)`);
    }
    if (checks.keyField !== undefined && raw.error === undefined) {
      const key = itemKey(raw, checks.keyField);
      const first = key === undefined ? undefined : seen.get(key);
      if (first !== undefined) {
        throw new ConfigError(
          `--key ${checks.keyField}: the key "${key}" is on line ${first} and on line ${raw.line}: keys must be unique`,
        );
      }
      if (key !== undefined) seen.set(key, raw.line);
    }
    yield raw;
  }
}
