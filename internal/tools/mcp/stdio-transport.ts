import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { killChild, PIPE_DRAIN_MS, trackChild, untrackChild } from '../child-reaper.js';
import { asRecord } from '../record.js';
import { classifyOversize, JsonLines, MAX_LINE_BYTES, type OversizeLine } from './json-lines.js';

export interface StdioServerParams {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  onStderr: (chunk: Buffer) => void;
}

/** After stdin is closed, how long a server gets to exit on its own before SIGTERM, then SIGKILL. */
const EOF_GRACE_MS = 300;
const TERM_GRACE_MS = 700;

/** `data.reason` of the error a request gets when its answer was over the size limit. */
export const ANSWER_TOO_LARGE = 'answer too large';
/** JSON-RPC's "internal error": the code of that error. */
const INTERNAL_ERROR = -32603;

/** A request sent and not answered yet: enough to fail it, and to say what it was. */
interface PendingRequest {
  id: string | number;
  method: string;
  tool?: string;
}

/**
 * MCP over stdio with the server in its own process group. Servers are very often started
 * through wrappers (`npx`, `uvx`, `sh -c`) whose children would survive a kill of the direct
 * child only; here the whole group is ended on close, on abort and when the server exits. Once
 * it has exited, the connection ends after a short drain even when a process outside the group (a
 * daemon) holds its pipes. Lines are read as the SDK does, but one over 10 MiB fails only the
 * request it answers, rather than the connection.
 */
export class ProcessGroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcessByStdio<Writable, Readable, Readable> | undefined;
  private readonly lines = new JsonLines();
  private readonly pending = new Map<string, PendingRequest>();
  private closing: Promise<void> | undefined;
  private exit: { code: number | null; signal: NodeJS.Signals | null; closing: boolean } | undefined;
  private drainTimer: NodeJS.Timeout | undefined;
  private ended = false;

  constructor(private readonly params: StdioServerParams) {}

  start(): Promise<void> {
    if (this.child) throw new Error('stdio transport already started');
    const { command, args, env, cwd, onStderr } = this.params;
    const child = spawn(command, args, { env, cwd, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child = child;
    return new Promise((resolve, reject) => {
      child.once('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.once('spawn', () => {
        if (child.pid !== undefined) trackChild(child.pid, 'group');
        resolve();
      });
      child.once('exit', (code, signal) => {
        this.exit = { code, signal, closing: this.closing !== undefined };
        // The leader is gone: whatever it left in its group goes with it.
        this.killGroup('SIGKILL');
        // What it wrote last may still be in the pipes: a moment to drain, not for ever. The end
        // waits for the next check phase, so that the pipes are polled once more after the wait.
        this.drainTimer = setTimeout(() => setImmediate(() => this.end()), PIPE_DRAIN_MS);
        this.drainTimer.unref();
      });
      child.once('close', () => this.end());
      child.stdin.on('error', (error) => this.onerror?.(error));
      child.stdout.on('error', (error) => this.onerror?.(error));
      child.stderr.on('data', onStderr);
      child.stdout.on('data', (chunk: Buffer) => this.receive(chunk));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed || this.closing) return Promise.reject(new Error('Not connected'));
    this.track(message);
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
  }

  /**
   * How the server ended when it exited on its own (`exited with code 1`, `killed by SIGKILL`);
   * undefined while it runs and when it was closed from here.
   */
  exitStatus(): string | undefined {
    const exit = this.exit;
    if (!exit || exit.closing) return undefined;
    return exit.signal ? `killed by ${exit.signal}` : `exited with code ${exit.code}`;
  }

  /** Closes stdin, then ends the group: SIGTERM after a short grace, SIGKILL after a longer one. */
  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    const child = this.child;
    if (!child || child.pid === undefined) return;
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    child.stdin.end();
    if (!(await settlesWithin(exited, EOF_GRACE_MS))) {
      this.killGroup('SIGTERM');
      if (!(await settlesWithin(exited, TERM_GRACE_MS))) this.killGroup('SIGKILL');
    }
    this.killGroup('SIGKILL');
    this.lines.clear();
  }

  /** Once, on 'close' or when the pipes had their time to drain: the connection is over. */
  private end(): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.drainTimer);
    const child = this.child;
    if (child) {
      // Held open by a process that outlived the server: nothing more is read or written.
      child.stdin.destroy();
      child.stdout.destroy();
      child.stderr.destroy();
      if (child.pid !== undefined) untrackChild(child.pid);
    }
    this.pending.clear();
    this.lines.clear();
    this.onclose?.();
  }

  private killGroup(signal: NodeJS.Signals): void {
    if (this.child?.pid !== undefined) killChild(this.child.pid, 'group', signal);
  }

  private receive(chunk: Buffer): void {
    for (const line of this.lines.push(chunk)) {
      if ('oversize' in line) {
        this.oversize(line.oversize);
        continue;
      }
      let message: JSONRPCMessage;
      try {
        message = deserializeMessage(line.text);
      } catch (error) {
        // A line that is not JSON-RPC (a server logging to stdout): reported, then skipped.
        this.onerror?.(error as Error);
        continue;
      }
      if ('id' in message && !('method' in message)) this.pending.delete(String(message.id));
      this.onmessage?.(message);
    }
  }

  /** Requests this side sent are remembered until answered or cancelled. */
  private track(message: JSONRPCMessage): void {
    if (!('method' in message)) return;
    const params = asRecord(message.params);
    if ('id' in message) {
      const tool =
        message.method === 'tools/call' && typeof params.name === 'string' ? params.name : undefined;
      this.pending.set(String(message.id), {
        id: message.id,
        method: message.method,
        ...(tool === undefined ? {} : { tool }),
      });
    } else if (message.method === 'notifications/cancelled' && params.requestId !== undefined) {
      this.pending.delete(String(params.requestId));
    }
  }

  /**
   * A message over the size limit was skipped. When it answers a request of ours, that request
   * fails saying so, and the connection and every other request carry on. An answer that shows no
   * id fails the only request waiting, or, with several, all of them (better than leaving them to
   * wait for their timeout). Anything else (a notification, a request, a stray line) is reported.
   */
  private oversize(line: OversizeLine): void {
    const { kind, id } = classifyOversize(line);
    const size = `${line.bytes} bytes, over the ${MAX_LINE_BYTES / 2 ** 20} MiB limit for one message`;
    const known = id === undefined ? undefined : this.pending.get(String(id));
    if (kind !== 'response' || (id !== undefined && !known)) {
      this.onerror?.(new Error(`skipped a message of ${size}`));
      return;
    }
    const failed = known ? [known] : [...this.pending.values()];
    for (const request of failed) {
      this.pending.delete(String(request.id));
      const what =
        request.tool !== undefined
          ? `the result of tool "${request.tool}"`
          : `the answer to ${request.method}`;
      const message =
        failed.length === 1
          ? `${what} is ${size}; it was dropped (the server is still connected)`
          : `${what} may have been an answer of ${size}, that named no request; it was dropped, and the ${failed.length} calls waiting all failed (the server is still connected)`;
      this.onmessage?.({
        jsonrpc: '2.0',
        id: request.id,
        error: { code: INTERNAL_ERROR, message, data: { reason: ANSWER_TOO_LARGE, bytes: line.bytes } },
      });
    }
  }
}

function settlesWithin(promise: Promise<void>, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    void promise.then(() => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}
