import type { JsonValue } from '../provider/types.js';
import { maskSecrets } from '../secrets.js';
import { oneLine } from '../text.js';

/** A recorded request, as the cassette keeps it (the canonical request, keys sorted). */
export interface RecordedExchange {
  agent: string;
  request: JsonValue;
}

/**
 * What makes a request the cassette has no answer for differ from what was recorded: the nearest
 * recorded request of the same agent (the one with the fewest differing parts) and the first part
 * that differs, with a hint at the usual cause. Empty when the agent made no recorded request.
 */
export function describeMiss(
  request: JsonValue,
  agentPath: string,
  recorded: readonly RecordedExchange[],
): string {
  const name = agentName(agentPath);
  const own = recorded.filter((entry) => entry.agent === agentPath);
  const candidates = own.length > 0 ? own : recorded.filter((entry) => agentName(entry.agent) === name);
  if (candidates.length === 0)
    return `; the cassette has no request of agent "${name}": was it recorded with this agent?`;
  // Fewest differing parts first; of those, the longest conversation in common (a later turn).
  let nearest: { differences: Difference[]; agent: string; common: number } | undefined;
  for (const entry of candidates) {
    const differences = differencesOf(entry.request, request);
    const common = commonMessages(entry.request, request);
    const fewer = !nearest || differences.length < nearest.differences.length;
    const tie = nearest !== undefined && differences.length === nearest.differences.length;
    if (fewer || (tie && common > (nearest?.common ?? 0)))
      nearest = { differences, agent: entry.agent, common };
  }
  const first = nearest?.differences[0];
  if (!nearest || !first) {
    return '; the same request was recorded, and its answers are used up: this run asks it more often than the recorded one did';
  }
  return `; the nearest recorded request of "${nearest.agent}" differs first in ${first.part}${first.detail}: ${first.hint}`;
}

interface Difference {
  part: string;
  detail: string;
  hint: string;
}

type Obj = { [key: string]: JsonValue };

/** The parts a request is compared by, in the order a user would look at them. */
function differencesOf(recorded: JsonValue, asked: JsonValue): Difference[] {
  const was = asObject(recorded);
  const now = asObject(asked);
  const found: Difference[] = [];
  const wasMessages = asArray(was.messages);
  const nowMessages = asArray(now.messages);
  const wasUser = firstUserText(wasMessages);
  const nowUser = firstUserText(nowMessages);
  if (wasUser !== nowUser) {
    found.push({
      part: 'the user message',
      detail: ` (recorded ${describeText(wasUser)}, now ${describeText(nowUser)})`,
      hint: 'the input differs: was the same stdin or -p given?',
    });
  }
  if (!same(was.model, now.model) || !same(was.provider, now.provider)) {
    found.push({
      part: 'the model',
      detail: ` (recorded ${modelOf(was)}, now ${modelOf(now)})`,
      hint: "was --model given, or the agent's model or config.toml changed?",
    });
  }
  if (!same(was.system, now.system)) {
    found.push({
      part: 'the system prompt',
      detail: '',
      hint: 'the agent file, its skill, files or memory changed since the recording?',
    });
  }
  if (!same(was.tools ?? [], now.tools ?? [])) {
    found.push({
      part: 'the tools',
      detail: ` (recorded ${toolNames(was.tools)}, now ${toolNames(now.tools)})`,
      hint: 'its tools, sub-agents or MCP servers changed since the recording?',
    });
  }
  if (!same(wasMessages.slice(1), nowMessages.slice(1))) {
    const at = commonMessages(recorded, asked);
    const role = String(asObject(nowMessages[at] ?? wasMessages[at]).role ?? 'message');
    found.push({
      part: 'the conversation after the user message',
      detail: ` (message ${at + 1}, ${role === 'tool' ? 'the tool results' : `the ${role}'s`}; recorded ${wasMessages.length} messages, now ${nowMessages.length})`,
      hint: 'an earlier answer or tool result differs (a file, a command or a sub-agent gave something else)',
    });
  }
  const compared = new Set(['messages', 'model', 'provider', 'system', 'tools']);
  const params = [...new Set([...Object.keys(was), ...Object.keys(now)])].filter((key) => !compared.has(key));
  for (const key of params.sort()) {
    if (!same(was[key], now[key])) {
      found.push({
        part: `the parameter ${key}`,
        detail: ` (recorded ${JSON.stringify(was[key] ?? null)}, now ${JSON.stringify(now[key] ?? null)})`,
        hint: "the agent's [params] or a flag changed since the recording?",
      });
    }
  }
  return found;
}

/** How many messages two requests have in common from the start. */
function commonMessages(recorded: JsonValue, asked: JsonValue): number {
  const was = asArray(asObject(recorded).messages);
  const now = asArray(asObject(asked).messages);
  let count = 0;
  while (count < was.length && count < now.length && same(was[count], now[count])) count++;
  return count;
}

/** `lead/call_agent#2:worker` → `worker`. */
function agentName(path: string): string {
  const last = path.slice(path.lastIndexOf('/') + 1);
  return last.slice(last.lastIndexOf(':') + 1);
}

function asObject(value: JsonValue | undefined): Obj {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {};
}

function asArray(value: JsonValue | undefined): JsonValue[] {
  return Array.isArray(value) ? value : [];
}

function firstUserText(messages: JsonValue[]): string | undefined {
  const first = asObject(messages[0]);
  return first.role === 'user' && typeof first.content === 'string' ? first.content : undefined;
}

function same(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

function modelOf(request: Obj): string {
  return `${String(request.provider ?? '?')}/${String(request.model ?? '?')}`;
}

function toolNames(tools: JsonValue | undefined): string {
  const names = asArray(tools).map((tool) => String(asObject(tool).name ?? '?'));
  return names.length > 0 ? names.join(', ') : 'none';
}

/** A message as a short, masked, one-line quote with its length. */
function describeText(text: string | undefined): string {
  if (text === undefined) return 'no user message';
  const head = oneLine(maskSecrets(text));
  const quoted = head.length > 40 ? `${head.slice(0, 40)}…` : head;
  return `${text.length} chars, "${quoted}"`;
}
