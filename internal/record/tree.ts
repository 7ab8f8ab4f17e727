import { addUsage, emptyUsage } from '../provider/types.js';
import { splitPath } from '../runner/agent-path.js';
import type { RunEvent } from '../runner/events.js';
import type { RecordedAgent } from './record.js';

/**
 * The agent tree as a run's events tell it: one node per agent, under its caller (the path up to
 * its last `/`), in start order, with its outcome once it ended and, until then, where it is —
 * its turn, the tools in flight, a retry, the tokens of its turns so far. The live tree on the
 * terminal and the recorder feed it the events as they come; `axe runs show` feeds it the
 * transcripts of a run that may have been killed half-way.
 */
export class TreeBuilder {
  private readonly nodes = new Map<string, RecordedAgent>();
  /** Per agent path: its tool calls in flight, call id → tool name. */
  private readonly toolsRunning = new Map<string, Map<string, string>>();
  readonly roots: RecordedAgent[] = [];

  /** `transcript`: the file a recorder writes this agent's lines to (a node's first event sets it). */
  observe(event: RunEvent, transcript = ''): void {
    const node = this.nodeOf(event.path, event.agent, event.depth, event.time, transcript);
    switch (event.type) {
      case 'agent.start':
        node.model = event.model;
        node.task = event.task;
        if (event.description !== undefined) node.description = event.description;
        node.startedAt = event.time;
        if (event.callId !== undefined) node.callId = event.callId;
        break;
      case 'agent.ready':
        node.model = event.model;
        break;
      case 'turn.start':
        node.lastTurn = event.turn;
        break;
      case 'turn.end':
        node.usage = addUsage(node.usage, event.usage);
        delete node.retry;
        break;
      case 'retry':
        node.retry = event.attempt;
        break;
      case 'tool.start':
        this.running(node).set(event.callId, event.name);
        if (!Object.hasOwn(node, 'inTools')) this.showToolsRunning(node);
        break;
      case 'tool.end':
        this.running(node).delete(event.callId);
        break;
      case 'agent.end':
        Object.assign(node, {
          status: event.status,
          endedAt: event.time,
          durationMs: event.durationMs,
          turns: event.turns,
          toolCalls: event.toolCalls,
          usage: event.usage,
          ...(event.cost !== undefined ? { cost: event.cost } : {}),
          ...(event.error !== undefined ? { error: event.error } : {}),
        });
        delete node.retry;
        this.toolsRunning.delete(node.path);
        break;
      default:
    }
  }

  /**
   * `inTools`, the names of the node's tools in flight, worked out when read (the live tree, JSON):
   * copied on every tool event, a 512-way fan-out's 1024 events made a quadratic cost.
   */
  private showToolsRunning(node: RecordedAgent): void {
    Object.defineProperty(node, 'inTools', {
      enumerable: true,
      configurable: true,
      get: () => {
        const running = this.toolsRunning.get(node.path);
        return running !== undefined && running.size > 0 ? [...running.values()] : undefined;
      },
    });
  }

  get(path: string): RecordedAgent | undefined {
    return this.nodes.get(path);
  }

  all(): RecordedAgent[] {
    return [...this.nodes.values()];
  }

  /** The node of `path`, made (and its callers' before it) on the first event that names it. */
  private nodeOf(
    path: string,
    agent: string,
    depth: number,
    time: number,
    transcript: string,
  ): RecordedAgent {
    const known = this.nodes.get(path);
    if (known) {
      // A caller made ahead of its own first event gets its transcript then.
      if (known.transcript === '') known.transcript = transcript;
      return known;
    }
    const node: RecordedAgent = {
      path,
      agent,
      depth,
      task: '',
      model: '',
      status: 'running',
      startedAt: time,
      turns: 0,
      toolCalls: 0,
      usage: emptyUsage(),
      transcript,
      children: [],
    };
    this.nodes.set(path, node);
    const { parent } = splitPath(path);
    if (parent === undefined) this.roots.push(node);
    else this.nodeOf(parent, splitPath(parent).agent, depth - 1, time, '').children.push(node);
    return node;
  }

  private running(node: RecordedAgent): Map<string, string> {
    let running = this.toolsRunning.get(node.path);
    if (!running) {
      running = new Map();
      this.toolsRunning.set(node.path, running);
    }
    return running;
  }
}
