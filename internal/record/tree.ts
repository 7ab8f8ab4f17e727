import { emptyUsage } from '../provider/types.js';
import type { RecordedAgent, TranscriptLine } from './record.js';

/**
 * The agent tree as a run's events tell it: one node per agent, under its caller, in start
 * order, with its outcome once it ended and, until then, where it is. The recorder feeds it live;
 * `axe runs show` feeds it the transcripts of a run that may have been killed half-way.
 */
export class TreeBuilder {
  private readonly nodes = new Map<string, RecordedAgent>();
  private readonly toolsRunning = new Map<string, Map<string, string>>();
  readonly roots: RecordedAgent[] = [];

  observe(line: TranscriptLine, transcript: string): void {
    const node = this.nodeOf(line, transcript);
    switch (line.type) {
      case 'agent.start':
        node.model = line.model;
        node.task = line.task;
        node.startedAt = line.time;
        if (line.callId !== undefined) node.callId = line.callId;
        break;
      case 'agent.ready':
        node.model = line.model;
        break;
      case 'turn.start':
        node.lastTurn = line.turn;
        break;
      case 'tool.start':
        this.running(node).set(line.callId, line.name);
        node.inTool = line.name;
        break;
      case 'tool.end': {
        const running = this.running(node);
        running.delete(line.callId);
        const last = [...running.values()].at(-1);
        if (last === undefined) delete node.inTool;
        else node.inTool = last;
        break;
      }
      case 'agent.end':
        Object.assign(node, {
          status: line.status,
          endedAt: line.time,
          durationMs: line.durationMs,
          turns: line.turns,
          toolCalls: line.toolCalls,
          usage: line.usage,
          ...(line.cost !== undefined ? { cost: line.cost } : {}),
          ...(line.error !== undefined ? { error: line.error } : {}),
        });
        delete node.inTool;
        this.toolsRunning.delete(node.path);
        break;
      default:
    }
  }

  get(path: string): RecordedAgent | undefined {
    return this.nodes.get(path);
  }

  all(): RecordedAgent[] {
    return [...this.nodes.values()];
  }

  private nodeOf(line: TranscriptLine, transcript: string): RecordedAgent {
    const known = this.nodes.get(line.path);
    if (known) return known;
    const node: RecordedAgent = {
      path: line.path,
      agent: line.agent,
      depth: line.depth,
      task: '',
      model: '',
      status: 'running',
      startedAt: line.time,
      turns: 0,
      toolCalls: 0,
      usage: emptyUsage(),
      transcript,
      children: [],
    };
    this.nodes.set(line.path, node);
    const parent = line.parent !== undefined ? this.nodes.get(line.parent) : undefined;
    if (parent) parent.children.push(node);
    else this.roots.push(node);
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
