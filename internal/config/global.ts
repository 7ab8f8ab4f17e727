import { statSync } from 'node:fs';
import { join } from 'node:path';
import configSchema from '../../schemas/config.schema.json' with { type: 'json' };
import { readRegularFileSync } from '../fs/read-bounded.js';
import { READ_LIMITS } from '../fs/read-limits.js';
import type { JsonValue, ProviderApi } from '../provider/types.js';
import { addSecret } from '../secrets.js';
import { FileProblem, formatProblem, type ProblemLocation, unreadableFile } from './file-problem.js';
import { validate } from './generated/config-validator.js';
import { validateIgnoringUnknown } from './schema-messages.js';
import { parseTomlFile } from './toml.js';
import { decodeUtf8Strict } from './utf8.js';

/** One `[providers.<name>]` table of config.toml (schemas/config.schema.json). */
export interface ProviderConfig {
  api_key?: string;
  base_url?: string;
  api?: ProviderApi;
  http_referer?: string;
  app_title?: string;
  referer?: string;
  title?: string;
  categories?: string;
  headers?: Record<string, string>;
  region?: string;
}

export interface GlobalConfig {
  /** The file it came from; undefined when there was none. */
  source?: string;
  /** Said once on stderr by whoever loads it for a run (a key in a file others may read). */
  warnings?: string[];
  /** The same, each with its place in the file apart (`axe validate`). */
  notes?: ConfigNote[];
  providers: Record<string, ProviderConfig>;
  /** `[runs] keep`: how many run records to keep. */
  runsKeep?: number;
  /** `[defaults] prompt_caching`: the prompt caching of agents that do not set it (run-agent.ts). */
  promptCaching?: boolean;
  /** `[prices."provider/model"]`: USD per million tokens, winning over the price table (internal/prices/). */
  prices?: PriceOverrides;
}

/** config.toml's `[prices."provider/model"]` tables, by `provider/model`. */
export type PriceOverrides = Readonly<
  Record<string, { input: number; output: number; cache_read?: number; cache_write?: number }>
>;

/** A warning about config.toml, with the field and place it is about. */
export interface ConfigNote extends ProblemLocation {
  message: string;
}

/**
 * Reads `<configDir>/config.toml`, in one go as agent files are (a small file, read before a run
 * starts). A missing file is an empty config; a bad one a ConfigError.
 */
export async function loadGlobalConfig(configDir: string): Promise<GlobalConfig> {
  const file = join(configDir, 'config.toml');
  let bytes: Buffer;
  try {
    bytes = readRegularFileSync(file, READ_LIMITS.configFile);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { providers: {} };
    throw unreadableFile(file, error);
  }
  const text = decodeUtf8Strict(bytes, file);
  const { data: parsed, locate } = parseTomlFile(text, file);
  // Go axe ignores keys it does not know: so does axe, with a warning each.
  const { unknown, invalid } = validateIgnoringUnknown(
    validate,
    parsed,
    configSchema as unknown as JsonValue,
  );
  const [first] = invalid;
  if (first) throw new FileProblem(file, first.message, { field: first.field, ...locate(first.segments) });
  const notes: ConfigNote[] = unknown.map((problem) => ({
    message: problem.message,
    field: problem.field,
    ...locate(problem.segments),
  }));
  const data = parsed as {
    providers?: Record<string, ProviderConfig>;
    runs?: { keep?: number };
    defaults?: { prompt_caching?: boolean };
    prices?: PriceOverrides;
  };
  const providers = data.providers ?? {};
  for (const table of Object.values(providers)) {
    addSecret(table.api_key);
    for (const value of Object.values(table.headers ?? {})) addSecret(value);
  }
  const readableKey = readableKeyWarning(file, providers);
  return {
    source: file,
    providers,
    ...(data.runs?.keep !== undefined ? { runsKeep: data.runs.keep } : {}),
    ...(data.defaults?.prompt_caching !== undefined ? { promptCaching: data.defaults.prompt_caching } : {}),
    ...(data.prices !== undefined ? { prices: data.prices } : {}),
    warnings: [
      ...notes.map((note) => formatProblem(file, note.message, note)),
      ...(readableKey ? [`${file} ${readableKey}`] : []),
    ],
    notes: readableKey ? [...notes, { message: readableKey }] : notes,
  };
}

/** A config.toml holding a key should be readable by its owner only: what to say when it is not. */
function readableKeyWarning(file: string, providers: Record<string, ProviderConfig>): string | undefined {
  if (!Object.values(providers).some((table) => table.api_key)) return undefined;
  const mode = statSync(file).mode;
  if ((mode & 0o077) === 0) return undefined;
  const octal = (mode & 0o777).toString(8);
  return `holds an API key and is readable by others (mode ${octal}): run chmod 600 ${file}`;
}
