import { createHash, type Hash } from 'node:crypto';
import { asArray, isRecord, type JsonRecord } from './json.js';
import type { CacheUsage, ScriptedReply, Wire } from './types.js';

/**
 * The providers' prompt caches, as the fake server models them (switched on with
 * `startFakeLlm({ cache: true })`). A request is cut into blocks in the order the provider builds
 * its prompt (tools, system prompt, then every message's content blocks); a block's tokens are its
 * JSON text's length / 4, rounded up, so that any change to a block changes what a prefix is.
 *
 * - Anthropic and Bedrock cache explicitly: up to four breakpoints (`cache_control`, `cachePoint`).
 *   A breakpoint reads the longest earlier-written prefix ending at it or at one of the 20 blocks
 *   before it, and writes its own prefix when that reaches the model's minimum. Entries live 5
 *   minutes (or `ttl: "1h"`), refreshed on every read.
 * - OpenAI (Chat Completions and Responses) and Gemini cache implicitly: the longest prefix (at
 *   block boundaries) an earlier request of the same model sent is read, from 1,024 tokens on, in
 *   128-token steps for OpenAI (Gemini: from its model's minimum, exact).
 * - Ollama caches nothing.
 *
 * A request's lookup happens when it arrives; what it writes becomes readable when its response
 * starts, as on the real services (concurrent requests with the same prefix each write it).
 */
export interface CacheOptions {
  /** The clock of TTLs (defaults to Date.now), so that a test can let entries expire. */
  now?: () => number;
}

const FIVE_MINUTES = 5 * 60_000;
const ONE_HOUR = 60 * 60_000;
/** Anthropic looks this many blocks back from a breakpoint for an earlier entry. */
const LOOKBACK = 20;
const MAX_BREAKPOINTS = 4;
const OPENAI_MINIMUM = 1024;
const OPENAI_STEP = 128;

interface Block {
  key: string;
  tokens: number;
  /** Anthropic / Bedrock: a breakpoint after this block, with its lifetime. */
  breakpointTtl?: number;
}

/** What a request found in the cache when it arrived, and what it will write once answered. */
export interface CacheLookup {
  usage: CacheUsage;
  /** Prefix hashes to store (with their lifetimes) when the response starts. */
  writes: { hash: string; ttl: number }[];
}

export function tokensOf(text: string): number {
  return Math.ceil(Buffer.byteLength(text) / 4);
}

/** The smallest prefix Anthropic caches, by model (Bedrock's ids carry the same names). */
export function anthropicMinimum(model: string): number {
  if (/opus-4-[56]|haiku-4-5/.test(model)) return 4096;
  if (/haiku-3|3-haiku|3-5-haiku/.test(model)) return 2048;
  return 1024;
}

/** Gemini's implicit cache: 1,024 tokens for Flash models, 4,096 for Pro. */
export function geminiMinimum(model: string): number {
  return model.includes('pro') ? 4096 : 1024;
}

function block(value: unknown, prefix: string): Block {
  const key = `${prefix}${JSON.stringify(value)}`;
  return { key, tokens: tokensOf(JSON.stringify(value)) };
}

function ttlOf(marker: unknown): number | undefined {
  if (!isRecord(marker)) return undefined;
  return marker.ttl === '1h' ? ONE_HOUR : FIVE_MINUTES;
}

/** A content block without its cache marker, and the marker's lifetime. */
function anthropicBlock(value: unknown, prefix: string): Block {
  if (!isRecord(value)) return block(value, prefix);
  const { cache_control: marker, ...rest } = value;
  const ttl = ttlOf(marker);
  return { ...block(rest, prefix), ...(ttl === undefined ? {} : { breakpointTtl: ttl }) };
}

function anthropicBlocks(body: JsonRecord): Block[] {
  const blocks = asArray(body.tools).map((tool) => anthropicBlock(tool, 'tool:'));
  // A string is one text block, as the API reads it.
  if (typeof body.system === 'string') blocks.push(block({ type: 'text', text: body.system }, 'system:'));
  else blocks.push(...asArray(body.system).map((part) => anthropicBlock(part, 'system:')));
  for (const message of asArray(body.messages).filter(isRecord)) {
    const role = `${String(message.role)}:`;
    if (typeof message.content === 'string')
      blocks.push(block({ type: 'text', text: message.content }, role));
    else blocks.push(...asArray(message.content).map((part) => anthropicBlock(part, role)));
  }
  return blocks;
}

/** Bedrock: a `cachePoint` block marks the block before it (in tools, system or a message). */
function withCachePoints(values: unknown[], prefix: string): Block[] {
  const blocks: Block[] = [];
  for (const value of values) {
    const last = blocks.at(-1);
    if (isRecord(value) && value.cachePoint !== undefined) {
      if (last) last.breakpointTtl = FIVE_MINUTES;
    } else blocks.push(block(value, prefix));
  }
  return blocks;
}

function bedrockBlocks(body: JsonRecord): Block[] {
  const toolConfig = isRecord(body.toolConfig) ? body.toolConfig : {};
  const blocks = withCachePoints(asArray(toolConfig.tools), 'tool:');
  blocks.push(...withCachePoints(asArray(body.system), 'system:'));
  for (const message of asArray(body.messages).filter(isRecord)) {
    blocks.push(...withCachePoints(asArray(message.content), `${String(message.role)}:`));
  }
  return blocks;
}

/** OpenAI renders the tools ahead of the conversation. */
function openAiBlocks(body: JsonRecord): Block[] {
  const tools = body.tools === undefined ? [] : [block(body.tools, 'tools:')];
  return [...tools, ...asArray(body.messages).map((m) => block(m, 'message:'))];
}

function responsesBlocks(body: JsonRecord): Block[] {
  const head = [body.tools, body.instructions].filter((v) => v !== undefined).map((v) => block(v, 'head:'));
  const input = typeof body.input === 'string' ? [body.input] : asArray(body.input);
  return [...head, ...input.map((item) => block(item, 'input:'))];
}

function geminiBlocks(body: JsonRecord): Block[] {
  const head = [body.systemInstruction, body.tools, body.toolConfig]
    .filter((v) => v !== undefined)
    .map((v) => block(v, 'head:'));
  return [...head, ...asArray(body.contents).map((c) => block(c, 'content:'))];
}

/** The running hash after each block: a prefix's identity, model included. */
function prefixHashes(model: string, blocks: Block[]): string[] {
  const hash: Hash = createHash('sha256').update(model);
  return blocks.map((b) => hash.update(`\n${b.key}`).copy().digest('hex'));
}

function prefixTokens(blocks: Block[]): number[] {
  let total = 0;
  return blocks.map((b) => {
    total += b.tokens;
    return total;
  });
}

export class PromptCache {
  readonly #entries = new Map<string, { expiresAt: number; ttl: number }>();
  readonly #now: () => number;

  constructor(options: CacheOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  /** The prompt's blocks as the wire's provider sees them; undefined when the wire caches nothing. */
  #blocks(wire: Wire, body: JsonRecord): Block[] | undefined {
    switch (wire) {
      case 'anthropic':
        return anthropicBlocks(body);
      case 'bedrock':
        return bedrockBlocks(body);
      case 'openai':
        return openAiBlocks(body);
      case 'responses':
        return responsesBlocks(body);
      case 'google':
        return geminiBlocks(body);
      case 'ollama':
        return undefined;
    }
  }

  #alive(hash: string): boolean {
    const entry = this.#entries.get(hash);
    if (entry === undefined) return false;
    if (entry.expiresAt <= this.#now()) {
      this.#entries.delete(hash);
      return false;
    }
    entry.expiresAt = this.#now() + entry.ttl;
    return true;
  }

  lookup(wire: Wire, model: string, body: unknown): CacheLookup | undefined {
    const blocks = isRecord(body) ? this.#blocks(wire, body) : undefined;
    if (blocks === undefined) return undefined;
    const hashes = prefixHashes(`${wire}:${model}`, blocks);
    const tokens = prefixTokens(blocks);
    const total = tokens.at(-1) ?? 0;
    return wire === 'anthropic' || wire === 'bedrock'
      ? this.#explicit(blocks, hashes, tokens, total, anthropicMinimum(model))
      : this.#implicit(wire, model, hashes, tokens, total);
  }

  #explicit(
    blocks: Block[],
    hashes: string[],
    tokens: number[],
    total: number,
    minimum: number,
  ): CacheLookup {
    const breakpoints = blocks.flatMap((b, i) => (b.breakpointTtl === undefined ? [] : [i]));
    let read = 0;
    for (const at of breakpoints) {
      for (let i = at; i >= Math.max(0, at - LOOKBACK); i--) {
        const hash = hashes[i];
        if (hash !== undefined && this.#alive(hash)) {
          read = Math.max(read, tokens[i] ?? 0);
          break;
        }
      }
    }
    const writes = breakpoints
      .filter((i) => (tokens[i] ?? 0) >= minimum)
      .map((i) => ({ hash: hashes[i] ?? '', ttl: blocks[i]?.breakpointTtl ?? FIVE_MINUTES }));
    const last = breakpoints.at(-1);
    const lastTokens = last === undefined ? 0 : (tokens[last] ?? 0);
    const write = lastTokens >= minimum && lastTokens > read ? lastTokens - read : 0;
    return { usage: { uncached: total - read - write, read, write }, writes };
  }

  #implicit(wire: Wire, model: string, hashes: string[], tokens: number[], total: number): CacheLookup {
    let matched = 0;
    for (let i = hashes.length - 1; i >= 0; i--) {
      const hash = hashes[i];
      if (hash !== undefined && this.#alive(hash)) {
        matched = tokens[i] ?? 0;
        break;
      }
    }
    const minimum = wire === 'google' ? geminiMinimum(model) : OPENAI_MINIMUM;
    let read = matched >= minimum ? matched : 0;
    if (wire !== 'google' && read > 0)
      read = minimum + Math.floor((read - minimum) / OPENAI_STEP) * OPENAI_STEP;
    // Every prefix of this request is remembered: the next turn may match any of them.
    const writes = hashes.map((hash) => ({ hash, ttl: FIVE_MINUTES }));
    return { usage: { uncached: total - read, read, write: 0 }, writes };
  }

  /** The response has started: what the request wrote becomes readable. */
  commit(lookup: CacheLookup): void {
    for (const { hash, ttl } of lookup.writes) {
      const existing = this.#entries.get(hash);
      this.#entries.set(hash, { ttl, expiresAt: Math.max(existing?.expiresAt ?? 0, this.#now() + ttl) });
    }
  }

  clear(): void {
    this.#entries.clear();
  }
}

/** How many cache breakpoints a request carries; more than four is refused by both services. */
export function breakpointCount(wire: Wire, body: unknown): number {
  if (!isRecord(body)) return 0;
  if (wire === 'anthropic') return anthropicBlocks(body).filter((b) => b.breakpointTtl !== undefined).length;
  if (wire === 'bedrock') return bedrockBlocks(body).filter((b) => b.breakpointTtl !== undefined).length;
  return 0;
}

export const MAX_CACHE_BREAKPOINTS = MAX_BREAKPOINTS;

/**
 * The scripted reply with the cache's counts where the script left them out, in the wire's own
 * terms (`input` is Anthropic's and Bedrock's uncached input, OpenAI's and Gemini's whole prompt).
 */
export function withCacheUsage(reply: ScriptedReply, wire: Wire, usage: CacheUsage): ScriptedReply {
  const scripted = reply.usage ?? {};
  const inclusive = wire === 'openai' || wire === 'google' || wire === 'responses';
  return {
    ...reply,
    usage: {
      ...scripted,
      input: scripted.input ?? (inclusive ? usage.uncached + usage.read : usage.uncached),
      cacheRead: scripted.cacheRead ?? usage.read,
      cacheWrite: scripted.cacheWrite ?? usage.write,
    },
  };
}
