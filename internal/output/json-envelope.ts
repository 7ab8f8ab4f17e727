import type { ArtifactEntry } from '../artifacts/artifacts.js';
import { BudgetError } from '../errors.js';
import type { Pricer } from '../prices/index.js';
import { isObject } from '../provider/json.js';
import type { JsonObject, JsonValue } from '../provider/types.js';
import type { AgentRunResult, RunOutcome, ToolCallDetail } from '../runner/types.js';
import { agentDollars, treeDollars } from './dollars.js';
import { detectRefusal } from './refusal.js';

/**
 * The one-line `--json` output: the Go axe envelope (same field names and meanings, so scripts
 * keep working) plus cache tokens, cost, the budget and the tree of sub-agent calls.
 */
export interface JsonEnvelope {
  content: string;
  /** The value `submit_result` handed over (agents with `[output]`). */
  output?: JsonValue;
  /** The model as the provider reports it, without the provider prefix (Go axe semantics). */
  model: string;
  provider: string;
  /** The top-level agent's own calls, summed over its turns (Go axe semantics). */
  input_tokens: number;
  output_tokens: number;
  stop_reason: string;
  duration_ms: number;
  tool_calls: number;
  tool_call_details: JsonToolCallDetail[];
  refused: boolean;
  retry_attempts: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost?: number;
  /**
   * (axe) What the whole tree's calls cost in US dollars at their models' prices, and what they
   * would have cost with no prompt caching: only when every agent that made calls has a price.
   */
  cost_usd?: number;
  cost_usd_without_cache?: number;
  /** Of `output_tokens`, the reasoning tokens, when the provider reports any. */
  reasoning_tokens?: number;
  /** OpenRouter's response cache of the last call, `HIT` or `MISS` (Go axe: only when sent). */
  cache_status?: string;
  /** The provider's reason when the last call was refused or blocked (`refused` is then true). */
  refusal?: string;
  budget_max_tokens?: number;
  /** Tree-wide: every call of every agent. */
  budget_used_tokens?: number;
  budget_exceeded?: boolean;
  /** Files written into the run's artifact directory (Go axe: only when there are any). */
  artifacts?: ArtifactEntry[];
  agents: JsonAgentNode[];
  /** Present when the run failed; `content` then holds the answer so far. */
  error?: string;
  exit_code?: number;
}

export interface JsonToolCallDetail {
  name: string;
  input: unknown;
  output: string;
  is_error: boolean;
  /** The turn of the call, counted from 0 as Go axe does (the `[turn N]` lines count from 1). */
  turn: number;
  duration_ms: number;
}

export interface JsonAgentNode {
  agent: string;
  /** `provider/model` as served. */
  model: string;
  depth: number;
  status: AgentRunResult['status'];
  duration_ms: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  cost?: number;
  /** (axe) This agent's own calls in dollars, with and without caching, when its model has a price. */
  cost_usd?: number;
  cost_usd_without_cache?: number;
  turns: number;
  tool_calls: number;
  files_read: string[];
  files_modified: string[];
  output?: JsonValue;
  error?: string;
  children: JsonAgentNode[];
}

export function buildJsonEnvelope(outcome: RunOutcome, price?: Pricer): JsonEnvelope {
  const { result, budget, error } = outcome;
  const { provider, model } = splitModel(result.model);
  const envelope: JsonEnvelope = {
    content: result.content,
    model,
    provider,
    input_tokens: result.usage.inputTokens,
    output_tokens: result.usage.outputTokens,
    stop_reason: result.stopReason,
    duration_ms: result.durationMs,
    tool_calls: result.toolCalls,
    tool_call_details: result.toolCallDetails.map(toJsonDetail),
    refused: result.refusal !== undefined || detectRefusal(result.content),
    retry_attempts: result.retries,
    cache_read_tokens: result.usage.cacheReadTokens,
    cache_write_tokens: result.usage.cacheWriteTokens,
    agents: result.children.map((child) => toAgentNode(child, price)),
  };
  if (result.output !== undefined) envelope.output = result.output;
  if (result.cost !== undefined) envelope.cost = result.cost;
  const dollars = price && treeDollars(result, price);
  if (dollars) {
    envelope.cost_usd = dollars.usd;
    envelope.cost_usd_without_cache = dollars.usdWithoutCache;
  }
  if (result.usage.reasoningTokens) envelope.reasoning_tokens = result.usage.reasoningTokens;
  if (result.cacheStatus) envelope.cache_status = result.cacheStatus;
  if (result.refusal !== undefined) envelope.refusal = result.refusal;
  if (budget.limit !== undefined) {
    envelope.budget_max_tokens = budget.limit;
    envelope.budget_used_tokens = budget.used;
    envelope.budget_exceeded = error instanceof BudgetError;
  }
  if (outcome.artifacts !== undefined && outcome.artifacts.length > 0) envelope.artifacts = outcome.artifacts;
  if (error) {
    envelope.error = error.message;
    envelope.exit_code = error.exitCode;
  }
  return envelope;
}

/**
 * The envelope's keys in alphabetical order, as Go axe prints them (it marshals a map, and Go's
 * encoding/json sorts a map's keys); axe's own keys take their places among them.
 */
export function renderJsonEnvelope(outcome: RunOutcome, price?: Pricer): string {
  return `${JSON.stringify(sortedKeys(buildJsonEnvelope(outcome, price)))}\n`;
}

function sortedKeys<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) as T;
}

/** The runner reports `provider/model`; the provider name never contains a slash. */
function splitModel(qualified: string): { provider: string; model: string } {
  const slash = qualified.indexOf('/');
  return slash === -1
    ? { provider: '', model: qualified }
    : { provider: qualified.slice(0, slash), model: qualified.slice(slash + 1) };
}

function toJsonDetail(detail: ToolCallDetail): JsonToolCallDetail {
  return {
    name: detail.name,
    // A map in Go axe: its keys sorted.
    input: isObject(detail.input as JsonValue)
      ? sortedKeys(detail.input as JsonObject)
      : (detail.input ?? {}),
    output: detail.output,
    is_error: detail.isError,
    turn: detail.turn - 1,
    duration_ms: detail.durationMs,
  };
}

function toAgentNode(result: AgentRunResult, price: Pricer | undefined): JsonAgentNode {
  const node: JsonAgentNode = {
    agent: result.agent,
    model: result.model,
    depth: result.depth,
    status: result.status,
    duration_ms: result.durationMs,
    input_tokens: result.usage.inputTokens,
    output_tokens: result.usage.outputTokens,
    cache_read_tokens: result.usage.cacheReadTokens,
    cache_write_tokens: result.usage.cacheWriteTokens,
    turns: result.turns,
    tool_calls: result.toolCalls,
    files_read: result.filesRead,
    files_modified: result.filesModified,
    children: result.children.map((child) => toAgentNode(child, price)),
  };
  if (result.cost !== undefined) node.cost = result.cost;
  const dollars = price && agentDollars(result, price);
  if (dollars) {
    node.cost_usd = dollars.usd;
    node.cost_usd_without_cache = dollars.usdWithoutCache;
  }
  if (result.output !== undefined) node.output = result.output;
  if (result.error !== undefined) node.error = result.error;
  return node;
}
