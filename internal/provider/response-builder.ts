import { parseToolArguments } from './json.js';
import {
  type ChatResponse,
  emptyUsage,
  type Reasoning,
  type StreamEvent,
  type ToolCall,
  type Usage,
} from './types.js';

/** What a wire's translation produces before the sender adds retries and the request id. */
export type WireResponse = Omit<ChatResponse, 'retries' | 'requestId'>;

/** The caller's `onEvent` threw: its error is passed through untouched, never classified. */
export class ListenerError extends Error {
  constructor(readonly original: unknown) {
    super('onEvent threw');
    this.name = 'ListenerError';
  }
}

interface PendingCall {
  id: string;
  name: string;
  args: string;
  signature?: string;
  ended: boolean;
}

/**
 * Assembles a streamed response. Each wire's stream translator calls these methods as its
 * events arrive; the builder forwards them as provider-neutral `StreamEvent`s and keeps the
 * state needed for the final `ChatResponse` (text, tool calls by index, usage, stop reason).
 */
export class ResponseBuilder {
  private text = '';
  private readonly calls = new Map<number, PendingCall>();
  private readonly usage: Usage = emptyUsage();
  private stopReason: string | undefined;
  private cost: number | undefined;
  private refusal = '';
  private readonly thinking = new Map<number, Reasoning>();
  /** True once any event was emitted, listener or not (a failed stream is then not retried). */
  delivered = false;

  /** `served` starts as the requested model; the wire's own model name replaces it when sent. */
  constructor(
    private served: string,
    private readonly onEvent?: (event: StreamEvent) => void,
  ) {}

  addText(delta: string): void {
    if (delta === '') return;
    this.text += delta;
    this.emit({ type: 'text.delta', text: delta });
  }

  startToolCall(index: number, id: string, name: string, signature?: string): void {
    const call: PendingCall = { id, name, args: '', ended: false };
    if (signature !== undefined) call.signature = signature;
    this.calls.set(index, call);
    this.emit({ type: 'toolcall.start', index, id, name });
  }

  /**
   * The call at `index` starts with this id and name; once started, a non-empty id or name sent
   * in a later delta replaces the one held.
   */
  identifyToolCall(index: number, id: string, name: string): void {
    const call = this.calls.get(index);
    if (call === undefined) {
      this.startToolCall(index, id, name);
      return;
    }
    if (id !== '') call.id = id;
    if (name !== '') call.name = name;
  }

  hasToolCall(index: number): boolean {
    return this.calls.has(index);
  }

  addToolArguments(index: number, delta: string): void {
    const call = this.calls.get(index);
    if (call === undefined || delta === '') return;
    call.args += delta;
    this.emit({ type: 'toolcall.delta', index, argumentsDelta: delta });
  }

  endToolCall(index: number): void {
    const call = this.calls.get(index);
    if (call === undefined || call.ended) return;
    call.ended = true;
    this.emit({ type: 'toolcall.end', index });
  }

  /** A tool call that arrives whole (Ollama, Gemini). */
  addWholeToolCall(index: number, id: string, name: string, args: string, signature?: string): void {
    this.startToolCall(index, id, name, signature);
    this.addToolArguments(index, args);
    this.endToolCall(index);
  }

  /** Usage fields present in this event replace the ones seen before (wires report running totals). */
  setUsage(usage: Partial<Usage>): void {
    Object.assign(this.usage, usage);
  }

  setStopReason(reason: string): void {
    this.stopReason = reason;
  }

  get stopped(): boolean {
    return this.stopReason !== undefined;
  }

  setModel(model: string): void {
    if (model !== '') this.served = model;
  }

  setCost(cost: number): void {
    this.cost = cost;
  }

  /** Reasoning text at `index` (a content block's, or 0 for OpenAI's `reasoning_content`). */
  addThinking(index: number, delta: string): void {
    const block = this.thinking.get(index);
    if (block?.type === 'thinking') block.text += delta;
    else if (delta !== '') this.thinking.set(index, { type: 'thinking', text: delta });
  }

  setThinkingSignature(index: number, signature: string): void {
    const block = this.thinking.get(index);
    if (block?.type === 'thinking') block.signature = (block.signature ?? '') + signature;
    else this.thinking.set(index, { type: 'thinking', text: '', signature });
  }

  addRedactedThinking(index: number, data: string): void {
    this.thinking.set(index, { type: 'redacted', data });
  }

  /** OpenAI's `refusal` text, as it streams. */
  addRefusal(delta: string): void {
    this.refusal += delta;
  }

  /** A whole answer from a wire that does not stream, delivered as the events a stream would give. */
  replay(answer: WireResponse): WireResponse {
    this.setModel(answer.model);
    this.addText(answer.content);
    answer.toolCalls.forEach((call, index) => {
      this.addWholeToolCall(index, call.id, call.name, JSON.stringify(call.arguments), call.signature);
    });
    this.setUsage(answer.usage);
    this.setStopReason(answer.stopReason);
    if (answer.cost !== undefined) this.setCost(answer.cost);
    if (answer.refusal !== undefined) this.addRefusal(answer.refusal);
    for (const [index, block] of (answer.reasoning ?? []).entries()) this.thinking.set(index, block);
    return { ...this.finish(), toolCalls: answer.toolCalls };
  }

  /** Ends open tool calls and emits the closing `usage` and `done` events. */
  finish(): WireResponse {
    for (const index of this.calls.keys()) this.endToolCall(index);
    const stopReason = this.stopReason ?? '';
    this.emit({ type: 'usage', usage: { ...this.usage } });
    this.emit({ type: 'done', stopReason });
    const toolCalls = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call]) => toolCallFrom(call.id, call.name, call.args, call.signature));
    const response: WireResponse = {
      content: this.text,
      toolCalls,
      stopReason,
      usage: { ...this.usage },
      model: this.served,
    };
    if (this.cost !== undefined) response.cost = this.cost;
    if (this.refusal !== '') response.refusal = this.refusal;
    if (this.thinking.size > 0) {
      response.reasoning = [...this.thinking.entries()].sort(([a], [b]) => a - b).map(([, block]) => block);
    }
    return response;
  }

  private emit(event: StreamEvent): void {
    this.delivered = true;
    try {
      this.onEvent?.(event);
    } catch (error) {
      throw new ListenerError(error);
    }
  }
}

/** Ids handed to calls a server sent without one (each answer must name its call). */
let syntheticIds = 0;

export function toolCallFrom(id: string, name: string, rawArgs: string, signature?: string): ToolCall {
  const call: ToolCall = {
    id: id === '' ? `call_axe_${++syntheticIds}` : id,
    name,
    ...parseToolArguments(rawArgs),
  };
  if (signature !== undefined) call.signature = signature;
  return call;
}
