import { constants } from 'node:fs';
import { dirname } from 'node:path';
import { AxeError, ConfigError, ExitCode, ProviderError, type ProviderErrorDetails } from '../errors.js';
import { fsErrorReason } from '../fs/fs-error.js';
import { fsPromises } from '../fs/promises.js';
import { describeFileType, readRegularFile, UnreadableFileError } from '../fs/read-bounded.js';
import { READ_LIMITS } from '../fs/read-limits.js';
import { writeFileAtomic } from '../fs/write-atomic.js';
import { isPlainObject } from '../plain-object.js';
import type { ChatOptions, ChatRequest, ChatResponse, JsonValue, Provider } from '../provider/types.js';
import { maskSecrets, SecretHoldback } from '../secrets.js';
import { describeMiss } from './miss.js';

/**
 * Record / replay of provider exchanges. A cassette is JSONL, one exchange a line, keyed by the
 * SHA-256 of the canonical request (provider, model, system, messages, tools, params — sorted
 * keys; never keys, headers, the stream flag or prompt caching, which do not change the answer;
 * sub-agents' durations as 0). Replay serves identical requests in recorded order, preferring the
 * entry recorded for the same agent path, so parallel fan-out replays identically whatever order
 * the requests arrive in.
 *
 * A recording is kept in memory and published only when the run succeeds, in one atomic rename:
 * an interrupted or failed run, or a full disk, leaves the previous cassette as it was, and of two
 * concurrent recorders to one file the last to finish wins, each cassette complete.
 */

interface CassetteEntry {
  key: string;
  /** The agent path that made the request, e.g. `reviewer/call_agent#2:tester`. */
  agent: string;
  provider: string;
  request: JsonValue;
  response?: ChatResponse;
  /** A provider error, replayed as the same ProviderError. */
  error?: { message: string; details: ProviderErrorDetails };
  /** Text deltas as streamed, replayed as such. */
  deltas?: string[];
}

/** A request the cassette has no (more) answers for: exit 3, naming the agent and the request. */
export class CassetteMissError extends AxeError {
  constructor(message: string) {
    super(message, ExitCode.provider);
  }
}

/** Deltas masked as one stream: each as much as could be written when it came, the rest after. */
function maskedDeltas(deltas: readonly string[]): string[] {
  const holdback = new SecretHoldback();
  const masked = [...deltas.map((delta) => holdback.push(delta)), holdback.flush()];
  return masked.filter((delta) => delta !== '');
}

function canonicalRequest(provider: string, request: ChatRequest): JsonValue {
  const { stream: _stream, promptCaching: _promptCaching, ...rest } = request;
  return sortKeys(JSON.parse(withoutDurations(JSON.stringify({ provider, ...rest }))) as JsonValue);
}

/**
 * A JSON sub-agent result (`result_format = "json"`, `task_output`) holds the child's wall-clock
 * `duration_seconds`, different every run, in a string of the request (hence the escaped quotes):
 * keyed on it, the caller's next request would never replay.
 */
function withoutDurations(json: string): string {
  return json.replace(/\\"duration_seconds\\":[\d.]+/g, '\\"duration_seconds\\":0');
}

function requestKey(canonical: JsonValue): string {
  // Loaded here, not at start-up: only cassette runs hash requests.
  const { createHash } = process.getBuiltinModule('node:crypto');
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex');
}

function sortKeys(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== 'object') return value;
  const sorted: { [key: string]: JsonValue } = {};
  for (const key of Object.keys(value).sort()) sorted[key] = sortKeys(value[key] as JsonValue);
  return sorted;
}

export class CassetteRecorder {
  private readonly entries: CassetteEntry[] = [];

  private constructor(private readonly file: string) {}

  /** Fails early (exit 2) when the file could not be written at the end: nothing is written yet. */
  static async open(file: string): Promise<CassetteRecorder> {
    const existing = await fsPromises()
      .stat(file)
      .catch(() => undefined);
    if (existing !== undefined && !existing.isFile()) {
      throw new ConfigError(`--record: ${file} is ${describeFileType(existing)}, not a regular file`);
    }
    try {
      await fsPromises().access(dirname(file), constants.W_OK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const why = code === 'ENOENT' ? 'its directory does not exist' : 'its directory is not writable';
      throw new ConfigError(`--record: cannot write ${file}: ${why}`);
    }
    return new CassetteRecorder(file);
  }

  wrap(inner: Provider, agentPath: string): Provider {
    return {
      name: inner.name,
      chat: async (request: ChatRequest, options: ChatOptions): Promise<ChatResponse> => {
        const canonical = canonicalRequest(inner.name, request);
        const base = {
          key: requestKey(canonical),
          agent: agentPath,
          provider: inner.name,
          request: canonical,
        };
        const deltas: string[] = [];
        const onEvent: ChatOptions['onEvent'] = (event) => {
          if (event.type === 'text.delta') deltas.push(event.text);
          options.onEvent?.(event);
        };
        try {
          const response = await inner.chat(request, { ...options, onEvent });
          this.entries.push({ ...base, response, ...(request.stream ? { deltas } : {}) });
          return response;
        } catch (error) {
          // Our own aborts (timeouts, Ctrl-C) are not the provider's answer: they are not recorded.
          if (error instanceof ProviderError && !options.signal.aborted) {
            this.entries.push({ ...base, error: { message: error.message, details: error.details } });
          }
          throw error;
        }
      },
    };
  }

  /** Replaces the cassette with this run's exchanges, whole or not at all. */
  async publish(): Promise<void> {
    // Requests never hold keys; an answer or error that echoes one is masked like any output (its
    // deltas as the stream they were: a key split across them is masked whole).
    const lines = this.entries.map(
      (entry) =>
        `${maskSecrets(JSON.stringify(entry.deltas ? { ...entry, deltas: maskedDeltas(entry.deltas) } : entry))}\n`,
    );
    // 0600 when new, as a run record's files: a cassette holds the prompts and the answers.
    await writeFileAtomic(this.file, lines.join(''), { mode: 0o600 });
  }
}

export class CassettePlayer {
  private readonly byKey = new Map<string, CassetteEntry[]>();
  /** Every entry as read, answered or not: what a miss is compared with. */
  private readonly recorded: CassetteEntry[] = [];

  private constructor(private readonly file: string) {}

  /** Reads and checks the whole cassette (exit 2 naming the file, and the line when one is bad). */
  static async open(file: string): Promise<CassettePlayer> {
    let text: string;
    try {
      text = (await readRegularFile(file, READ_LIMITS.cassette)).toString('utf8');
    } catch (error) {
      if (error instanceof UnreadableFileError) throw new ConfigError(`--replay: ${file} ${error.message}`);
      throw new ConfigError(`--replay: cannot read ${file}: ${fsErrorReason(error)}`);
    }
    const player = new CassettePlayer(file);
    for (const [index, line] of text.split('\n').entries()) {
      if (line.trim() === '') continue;
      const entry = parseEntry(line);
      if (!entry) throw new ConfigError(`--replay: ${file}:${index + 1}: not a cassette entry`);
      player.recorded.push(entry);
      const list = player.byKey.get(entry.key) ?? [];
      list.push(entry);
      player.byKey.set(entry.key, list);
    }
    return player;
  }

  /** A provider that answers from the cassette only: no network, no key. */
  provider(name: string, agentPath: string): Provider {
    return {
      name,
      chat: async (request: ChatRequest, options: ChatOptions): Promise<ChatResponse> => {
        options.signal.throwIfAborted();
        const canonical = canonicalRequest(name, request);
        const key = requestKey(canonical);
        const entry = this.take(key, agentPath, canonical);
        if (entry.error) throw new ProviderError(entry.error.message, entry.error.details);
        // parseEntry lets no entry through without a well-formed response or error.
        const response = entry.response as ChatResponse;
        if (request.stream && options.onEvent) {
          for (const text of entry.deltas ?? [response.content]) {
            if (text !== '') options.onEvent({ type: 'text.delta', text });
          }
        }
        return structuredClone(response);
      },
    };
  }

  private take(key: string, agentPath: string, canonical: JsonValue): CassetteEntry {
    const list = this.byKey.get(key) ?? [];
    const sameAgent = list.findIndex((entry) => entry.agent === agentPath);
    const [entry] = list.splice(Math.max(sameAgent, 0), 1);
    if (!entry) {
      throw new CassetteMissError(
        `replay: no recorded response for agent "${agentPath}" (request ${key}) in ${this.file}${describeMiss(canonical, agentPath, this.recorded)}`,
      );
    }
    return entry;
  }
}

/** An entry recorded before durations were left out of the key: keyed as its request is now. */
function keyNow(request: unknown, key: string): string {
  const recorded = JSON.stringify(request ?? null);
  const canonical = withoutDurations(recorded);
  return canonical === recorded ? key : requestKey(JSON.parse(canonical) as JsonValue);
}

/** A line of a cassette, checked field by field: replay hands its response to the loop as is. */
function parseEntry(line: string): CassetteEntry | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isPlainObject(value)) return undefined;
  const { key, agent, provider, request, response, error, deltas } = value;
  if (typeof key !== 'string' || typeof agent !== 'string') return undefined;
  const answered = isChatResponse(response) || isRecordedError(error);
  if (!answered || (deltas !== undefined && !isStringArray(deltas))) return undefined;
  return {
    key: line.includes('duration_seconds') ? keyNow(request, key) : key,
    agent,
    provider: typeof provider === 'string' ? provider : '',
    request: (request ?? null) as JsonValue,
    ...(isChatResponse(response) ? { response } : {}),
    ...(isRecordedError(error) ? { error } : {}),
    ...(deltas !== undefined ? { deltas } : {}),
  };
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}

function isChatResponse(value: unknown): value is ChatResponse {
  if (!isPlainObject(value) || !isPlainObject(value.usage) || !Array.isArray(value.toolCalls)) return false;
  const { usage } = value;
  const counts = [usage.inputTokens, usage.outputTokens, usage.cacheReadTokens, usage.cacheWriteTokens];
  return (
    typeof value.content === 'string' &&
    typeof value.stopReason === 'string' &&
    typeof value.model === 'string' &&
    typeof value.retries === 'number' &&
    counts.every((count) => typeof count === 'number') &&
    value.toolCalls.every(
      (call) =>
        isPlainObject(call) &&
        typeof call.id === 'string' &&
        typeof call.name === 'string' &&
        isPlainObject(call.arguments),
    )
  );
}

function isRecordedError(value: unknown): value is NonNullable<CassetteEntry['error']> {
  return (
    isPlainObject(value) &&
    typeof value.message === 'string' &&
    isPlainObject(value.details) &&
    typeof value.details.category === 'string' &&
    typeof value.details.provider === 'string'
  );
}
