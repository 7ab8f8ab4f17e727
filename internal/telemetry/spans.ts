import {
  type Attributes,
  type Context,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { Message } from '../provider/types.js';
import { splitPath } from '../runner/agent-path.js';
import type { RunEvent, TraceLinks } from '../runner/events.js';
import { inputMessages, outputMessage, systemInstructions } from './content.js';

/**
 * The run's event stream read into spans, as the OpenTelemetry GenAI conventions name them: an
 * `invoke_agent {agent}` span per agent of the tree, a `chat {model}` span per model call under
 * it, an `execute_tool {tool}` span per tool call; a sub-agent's span is a child of the span of
 * the tool call that started it (background children too, which may outlive it). Every string
 * attribute is masked for secrets; content (messages, tool arguments and results) only with
 * `captureContent`.
 */
export class SpanBuilder implements TraceLinks {
  private readonly agents = new Map<string, AgentSpans>();

  private readonly mask: (text: string) => string;

  constructor(
    private readonly tracer: Tracer,
    private readonly options: {
      /** The context the root span continues: an incoming TRACEPARENT's, or a batch item's. */
      parent?: Context;
      captureContent: boolean;
      /** Masks known secrets: the CLI's own registry (this module runs from a bundle of its own). */
      mask: (text: string) => string;
      /** The run's id (its record's), once known. */
      runId?: () => string | undefined;
      /** config.toml's `[telemetry] propagate`, once read: model requests carry their span's context. */
      propagate?: () => boolean;
    },
  ) {
    this.mask = options.mask;
  }

  observe(event: RunEvent): void {
    const agent = this.agents.get(event.path);
    if (event.type === 'agent.start') {
      this.startAgent(event);
      return;
    }
    if (!agent) return;
    if (event.type !== 'message' || event.message.role !== 'assistant') this.endAnsweredChat(agent);
    switch (event.type) {
      case 'agent.ready':
        agent.model = event.model;
        agent.span.setAttribute('gen_ai.request.model', modelId(event.model));
        if (event.server !== undefined) agent.server = event.server;
        if (event.temperature !== undefined) agent.request['gen_ai.request.temperature'] = event.temperature;
        if (event.maxTokens !== undefined) agent.request['gen_ai.request.max_tokens'] = event.maxTokens;
        if (this.options.captureContent) agent.system = event.system;
        break;
      case 'message':
        if (this.options.captureContent) agent.messages.push(event.message);
        if (event.message.role === 'assistant' && agent.answered) {
          const { span, end } = agent.answered;
          if (this.options.captureContent) {
            span.setAttribute(
              'gen_ai.output.messages',
              this.mask(outputMessage(event.message, agent.stopReason)),
            );
          }
          span.end(end);
          delete agent.answered;
        }
        break;
      case 'turn.start':
        agent.chat = this.startChat(agent, event.time);
        break;
      case 'retry':
        agent.chat?.addEvent(
          'retry',
          {
            'axe.retry.attempt': event.attempt,
            'axe.retry.delay_ms': event.delayMs,
            'axe.retry.reason': this.mask(event.reason),
          },
          event.time,
        );
        break;
      case 'turn.end':
        if (agent.chat) this.endChat(agent, agent.chat, event);
        delete agent.chat;
        break;
      case 'tool.start':
        this.startTool(agent, event);
        break;
      case 'tool.end': {
        const tool = agent.tools.get(event.callId);
        if (!tool?.open) break;
        tool.open = false;
        if (this.options.captureContent)
          tool.span.setAttribute('gen_ai.tool.call.result', this.mask(event.output));
        if (event.isError) {
          tool.span.setAttribute('error.type', 'tool_error');
          tool.span.setStatus({ code: SpanStatusCode.ERROR, message: this.mask(firstLine(event.output)) });
        }
        tool.span.end(event.time);
        break;
      }
      case 'agent.end':
        this.endAgent(agent, event);
        break;
      default:
        break;
    }
  }

  forAgent(path: string): string | undefined {
    const agent = this.agents.get(path);
    return agent?.open ? traceparentOf(agent.span) : undefined;
  }

  forChat(path: string): string | undefined {
    const chat = this.options.propagate?.() ? this.agents.get(path)?.chat : undefined;
    return chat ? traceparentOf(chat) : undefined;
  }

  forCall(path: string, callId: string): string | undefined {
    const tool = this.agents.get(path)?.tools.get(callId);
    return tool?.open ? traceparentOf(tool.span) : undefined;
  }

  private startAgent(event: RunEvent & { type: 'agent.start' }): void {
    const { parent: callerPath } = splitPath(event.path);
    const caller = callerPath !== undefined ? this.agents.get(callerPath) : undefined;
    const parent =
      (event.callId !== undefined ? caller?.tools.get(event.callId)?.context : undefined) ??
      caller?.context ??
      this.options.parent ??
      ROOT_CONTEXT;
    const attributes: Attributes = {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': event.agent,
      'gen_ai.agent.id': this.mask(event.path),
      'axe.agent.depth': event.depth,
      ...(event.model !== '' ? providerAndModel(event.model) : {}),
      ...(event.callId !== undefined ? { 'gen_ai.tool.call.id': event.callId } : {}),
    };
    if (this.options.captureContent) attributes['axe.task'] = this.mask(event.task);
    const span = this.tracer.startSpan(
      `invoke_agent ${event.agent}`,
      { kind: SpanKind.INTERNAL, attributes, startTime: event.time },
      parent,
    );
    this.agents.set(event.path, {
      span,
      context: trace.setSpan(parent, span),
      open: true,
      model: event.model,
      request: {},
      messages: [],
      tools: new Map(),
    });
  }

  private startChat(agent: AgentSpans, time: number): Span {
    const model = modelId(agent.model);
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      ...providerAndModel(agent.model),
      ...agent.request,
      ...serverAttributes(agent.server),
    };
    if (this.options.captureContent) {
      if (agent.system)
        attributes['gen_ai.system_instructions'] = this.mask(systemInstructions(agent.system));
      attributes['gen_ai.input.messages'] = this.mask(inputMessages(agent.messages));
    }
    return this.tracer.startSpan(
      `chat ${model}`,
      { kind: SpanKind.CLIENT, attributes, startTime: time },
      agent.context,
    );
  }

  private endChat(agent: AgentSpans, chat: Span, event: RunEvent & { type: 'turn.end' }): void {
    const { usage } = event;
    chat.setAttributes({
      'gen_ai.response.finish_reasons': [event.stopReason],
      'gen_ai.usage.input_tokens': usage.inputTokens,
      'gen_ai.usage.output_tokens': usage.outputTokens,
      'gen_ai.usage.cache_read.input_tokens': usage.cacheReadTokens,
      'gen_ai.usage.cache_creation.input_tokens': usage.cacheWriteTokens,
      ...(usage.reasoningTokens !== undefined
        ? { 'gen_ai.usage.reasoning.output_tokens': usage.reasoningTokens }
        : {}),
      ...(event.model !== undefined ? { 'gen_ai.response.model': event.model } : {}),
    });
    // With content, the span waits for the answer's message (the next event) to record it.
    if (this.options.captureContent) {
      agent.answered = { span: chat, end: event.time };
      agent.stopReason = event.stopReason;
    } else chat.end(event.time);
  }

  /** A chat span kept open for its answer's message, ended when something else comes first. */
  private endAnsweredChat(agent: AgentSpans): void {
    if (!agent.answered) return;
    agent.answered.span.end(agent.answered.end);
    delete agent.answered;
  }

  private startTool(agent: AgentSpans, event: RunEvent & { type: 'tool.start' }): void {
    const attributes: Attributes = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': event.name,
      'gen_ai.tool.call.id': event.callId,
      'gen_ai.tool.type': 'function',
    };
    if (this.options.captureContent) {
      attributes['gen_ai.tool.call.arguments'] = this.mask(JSON.stringify(event.input ?? null));
    }
    const span = this.tracer.startSpan(
      `execute_tool ${event.name}`,
      { kind: SpanKind.INTERNAL, attributes, startTime: event.time },
      agent.context,
    );
    agent.tools.set(event.callId, { span, context: trace.setSpan(agent.context, span), open: true });
  }

  private endAgent(agent: AgentSpans, event: RunEvent & { type: 'agent.end' }): void {
    const failed = event.status !== 'completed';
    // A model call the agent's end cut short (its deadline, an error) ends with it, failed.
    if (agent.chat) {
      agent.chat.setAttribute('error.type', event.status === 'completed' ? 'error' : event.status);
      agent.chat.setStatus({
        code: SpanStatusCode.ERROR,
        ...(event.error ? { message: this.mask(event.error) } : {}),
      });
      agent.chat.end(event.time);
      delete agent.chat;
    }
    for (const tool of agent.tools.values()) {
      if (!tool.open) continue;
      tool.open = false;
      tool.span.setStatus({ code: SpanStatusCode.ERROR, message: `the agent ended (${event.status})` });
      tool.span.setAttribute('error.type', event.status);
      tool.span.end(event.time);
    }
    const runId = this.options.runId?.();
    agent.span.setAttributes({
      ...(runId ? { 'axe.run.id': runId } : {}),
      'axe.outcome': event.status,
      'axe.turns': event.turns,
      'axe.tool_calls': event.toolCalls,
      'gen_ai.usage.input_tokens': event.usage.inputTokens,
      'gen_ai.usage.output_tokens': event.usage.outputTokens,
      ...(event.cost !== undefined ? { 'axe.cost': event.cost } : {}),
    });
    if (failed) {
      agent.span.setAttribute('error.type', event.status);
      agent.span.setStatus({
        code: SpanStatusCode.ERROR,
        ...(event.error ? { message: this.mask(event.error) } : {}),
      });
    }
    if (this.options.captureContent) {
      agent.span.setAttribute('axe.answer', this.mask(event.content));
    }
    agent.span.end(event.time);
    agent.open = false;
    // Its messages are no longer needed; its tool calls' contexts are (a background child may start late).
    agent.messages = [];
  }
}

interface AgentSpans {
  span: Span;
  context: Context;
  open: boolean;
  /** `provider/model` as the agent's events name it. */
  model: string;
  server?: string;
  /** The request's parameters, for each chat span. */
  request: Attributes;
  system?: string;
  /** The conversation so far (only with content capture). */
  messages: Message[];
  chat?: Span;
  /** A chat span that has its answer, waiting for the answer's message. */
  answered?: { span: Span; end: number };
  stopReason?: string;
  tools: Map<string, { span: Span; context: Context; open: boolean }>;
}

/** W3C `traceparent` of a span: version 00, trace id, span id, flags. */
export function traceparentOf(span: Span): string {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-${traceFlags.toString(16).padStart(2, '0')}`;
}

/** The conventions' provider names where they differ from axe's (others as axe names them). */
const PROVIDER_NAMES: Readonly<Record<string, string>> = {
  gemini: 'gcp.gemini',
  google: 'gcp.gemini',
  bedrock: 'aws.bedrock',
};

function providerAndModel(qualified: string): Attributes {
  const slash = qualified.indexOf('/');
  if (slash < 0) return { 'gen_ai.request.model': qualified };
  const provider = qualified.slice(0, slash);
  return {
    'gen_ai.provider.name': PROVIDER_NAMES[provider] ?? provider,
    'gen_ai.request.model': qualified.slice(slash + 1),
  };
}

function modelId(qualified: string): string {
  const slash = qualified.indexOf('/');
  return slash < 0 ? qualified : qualified.slice(slash + 1);
}

function serverAttributes(server: string | undefined): Attributes {
  if (server === undefined) return {};
  const colon = server.lastIndexOf(':');
  return { 'server.address': server.slice(0, colon), 'server.port': Number(server.slice(colon + 1)) };
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
