import type { AwsCredentialSource } from './aws-credentials.js';

/**
 * The one vocabulary every provider translates to and from. Provider modules are pure translation
 * (`ChatRequest` → wire JSON, wire JSON / stream events → `ChatResponse`) plus the shared sender.
 */

export type JsonPrimitive = string | number | boolean | null;
export type JsonValue = JsonPrimitive | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** A tool offered to the model. `parameters` is a JSON Schema object (`type: "object"`). */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonObject;
}

/** A tool invocation requested by the model. Arguments keep their JSON types. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: JsonObject;
  /**
   * Set when the model sent arguments that are not a JSON object (OpenAI sends them as a string
   * that may not parse). `arguments` is then `{}` and the loop answers the call with an error.
   */
  argumentsError?: string;
  /**
   * An opaque token the provider requires back verbatim with this call in the next request
   * (Gemini's part-level `thoughtSignature`). Absent for the other wires.
   */
  signature?: string;
}

/** The answer to one tool call. `name` is the tool's name (Ollama and Gemini need it on the wire). */
export interface ToolResult {
  callId: string;
  name: string;
  content: string;
  isError: boolean;
}

/**
 * Reasoning a model returned with a turn, sent back with that turn as the API requires (never
 * shown): Anthropic `thinking` (with its signature) and `redacted_thinking` blocks, OpenAI-wire
 * `reasoning_content` (DeepSeek's thinking mode answers 400 without it).
 */
export type Reasoning =
  | { type: 'thinking'; text: string; signature?: string }
  | { type: 'redacted'; data: string };

export type Message =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[]; reasoning?: Reasoning[] }
  | { role: 'tool'; results: ToolResult[] };

export type ResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: JsonObject; strict?: boolean; description?: string };

export interface ChatRequest {
  /** The model id without the provider prefix, e.g. `claude-sonnet-5-5`. */
  model: string;
  system: string;
  messages: Message[];
  /** Omitted or empty: no tools key on the wire at all. */
  tools?: readonly ToolSpec[];
  temperature?: number;
  /** Nucleus sampling (`[params] top_p`), sent only when set. */
  topP?: number;
  maxTokens?: number;
  responseFormat?: ResponseFormat;
  /** Anthropic / Gemini thinking budget in tokens (`[params] thinking_budget`). */
  thinkingBudget?: number;
  /** OpenAI-wire / Responses reasoning effort (`[params] reasoning_effort`). */
  reasoningEffort?: string;
  /**
   * Anthropic / Bedrock prompt-cache breakpoints (prompt-cache.ts): `system` (`[params]
   * prompt_caching = true`, its meaning before caching was automatic) marks the system prompt on
   * every request and nothing else; `auto` (the default of an agent that may take more than one
   * turn) marks it once it is long enough to be cached, and the newest message of every follow-up
   * request. Absent: no breakpoint, as Go axe sends.
   */
  promptCaching?: 'system' | 'auto';
  stream: boolean;
}

/**
 * Token counts of one call, the same meaning on every wire: `inputTokens` are the uncached input
 * tokens (OpenAI and Gemini count cached tokens inside their prompt total; they are subtracted),
 * so input + cacheRead + cacheWrite is the whole prompt. Gemini thinking tokens count as output.
 */
export interface Usage {
  inputTokens: number;
  /** Everything the model generated, reasoning included, whichever field the server put it in. */
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  /** Of `outputTokens`, the reasoning (thinking) tokens, when the server reports them. */
  reasoningTokens?: number;
}

export interface ChatResponse {
  content: string;
  toolCalls: ToolCall[];
  /** Provider's own stop reason string (`end_turn`, `tool_use`, `stop`, `tool_calls`, `STOP`, …). */
  stopReason: string;
  usage: Usage;
  /** The model the server says it served. */
  model: string;
  /** Cost in USD when the provider reports it (OpenRouter `usage.cost`). */
  cost?: number;
  /** How many retries this call needed (0 when the first attempt succeeded). */
  retries: number;
  /** Reasoning to send back with this turn (see Reasoning), in the order it came. */
  reasoning?: Reasoning[];
  /** OpenRouter's response cache for this call (`X-OpenRouter-Cache-Status`: `HIT`, `MISS`). */
  cacheStatus?: string;
  /**
   * Why the model or the provider declined: OpenAI's `refusal` text, or a stop reason that means
   * a refusal or a safety block (`refusal`, `SAFETY`, `content_filter`, …).
   */
  refusal?: string;
  requestId?: string;
}

/** Streaming events, the same for every provider. */
export type StreamEvent =
  | { type: 'text.delta'; text: string }
  | { type: 'toolcall.start'; index: number; id: string; name: string }
  | { type: 'toolcall.delta'; index: number; argumentsDelta: string }
  | { type: 'toolcall.end'; index: number }
  | { type: 'usage'; usage: Usage }
  | { type: 'retry'; attempt: number; delayMs: number; reason: string }
  | { type: 'done'; stopReason: string };

export interface ChatOptions {
  signal: AbortSignal;
  onEvent?: (event: StreamEvent) => void;
  /**
   * Called when a server accepts the request and begins its answer (a 2xx status and headers read),
   * at each attempt: what a prompt cache the request wrote is readable from (cache_warmup).
   */
  onAnswerBegins?: () => void;
  /** Epoch ms after which the run is over: a retry whose wait would pass it is not attempted. */
  deadline?: number;
  /** Connections to this provider opened for the calls its answer may start (an agent's sub-agents). */
  connections?: ChildConnections;
}

/**
 * Idle connections opened for an agent's children, so that their requests go out at once instead
 * of connecting first.
 */
export interface ChildConnections {
  /** Opened while each request is in flight, for the children its answer may start. */
  ahead: number;
  /**
   * How many of an answer's tool calls start a child on the same provider at once: that many are
   * opened as soon as the answer is read, while the children are being set up.
   */
  forCalls: (calls: readonly ToolCall[]) => number;
}

export interface Provider {
  /** The provider name as written in the model string (`anthropic`, `openrouter`, `my-vllm`, …). */
  readonly name: string;
  chat(request: ChatRequest, options: ChatOptions): Promise<ChatResponse>;
}

/** A wire format: how requests and responses look on the HTTP connection. */
export type WireApi = 'anthropic' | 'openai' | 'ollama' | 'google' | 'responses' | 'bedrock';

/** What a provider speaks: one wire, or `opencode`, which picks the wire by model (see index.ts). */
export type ProviderApi = WireApi | 'opencode';

/** Everything needed to construct a provider, resolved from env > config.toml > defaults. */
export interface ProviderSettings {
  name: string;
  api: ProviderApi;
  baseUrl: string;
  /** The env var that overrides the base URL (`AXE_OLLAMA_BASE_URL`), named when the URL is invalid. */
  baseUrlEnv?: string;
  /** Absent only for providers that need none (Ollama, local OpenAI-compatible servers). */
  apiKey?: string;
  /** The env var that supplies the key (named in the error when a required key is missing). */
  apiKeyEnv: string;
  /** Where `apiKey` came from: that env var, or `api_key` in config.toml. */
  apiKeySource?: 'env' | 'config';
  /** Whether a call without `apiKey` must fail with a ConfigError (exit 2) before any request. */
  apiKeyRequired: boolean;
  /** Extra headers (OpenRouter attribution headers, …). */
  headers: Record<string, string>;
  /** AWS Bedrock: the region (signed, and in the default base URL) and where the credentials are. */
  aws?: { region?: string; credentials: AwsCredentialSource };
}

export type Backoff = 'exponential' | 'linear' | 'fixed';

export interface RetryPolicy {
  maxRetries: number;
  backoff: Backoff;
  initialDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  maxRetries: 2,
  backoff: 'exponential',
  initialDelayMs: 500,
  maxDelayMs: 30_000,
};

export function emptyUsage(): Usage {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
}

export function addUsage(a: Usage, b: Usage): Usage {
  return {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheWriteTokens: a.cacheWriteTokens + b.cacheWriteTokens,
    ...(a.reasoningTokens !== undefined || b.reasoningTokens !== undefined
      ? { reasoningTokens: (a.reasoningTokens ?? 0) + (b.reasoningTokens ?? 0) }
      : {}),
  };
}
