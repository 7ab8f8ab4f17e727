import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { killChild, trackChild, untrackChild } from '../child-reaper.js';

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

/**
 * MCP over stdio with the server in its own process group. Servers are very often started
 * through wrappers (`npx`, `uvx`, `sh -c`) whose children would survive a kill of the direct
 * child only; here the whole group is ended on close, on abort and when the server exits.
 */
export class ProcessGroupStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private child: ChildProcessByStdio<Writable, Readable, Readable> | undefined;
  private readonly buffer = new ReadBuffer();
  private closing: Promise<void> | undefined;

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
      // The leader is gone: whatever it left in its group goes with it.
      child.once('exit', () => this.killGroup('SIGKILL'));
      child.once('close', () => {
        if (child.pid !== undefined) untrackChild(child.pid);
        this.onclose?.();
      });
      child.stdin.on('error', (error) => this.onerror?.(error));
      child.stdout.on('error', (error) => this.onerror?.(error));
      child.stderr.on('data', onStderr);
      child.stdout.on('data', (chunk: Buffer) => this.receive(chunk));
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin || stdin.destroyed || this.closing) return Promise.reject(new Error('Not connected'));
    return new Promise((resolve) => {
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once('drain', resolve);
    });
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
    this.buffer.clear();
  }

  private killGroup(signal: NodeJS.Signals): void {
    if (this.child?.pid !== undefined) killChild(this.child.pid, 'group', signal);
  }

  private receive(chunk: Buffer): void {
    try {
      this.buffer.append(chunk);
    } catch (error) {
      this.onerror?.(error as Error);
      void this.close();
      return;
    }
    for (;;) {
      try {
        const message = this.buffer.readMessage();
        if (message === null) return;
        this.onmessage?.(message);
      } catch (error) {
        // A line that is not JSON-RPC (a server logging to stdout): reported, then skipped.
        this.onerror?.(error as Error);
      }
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
