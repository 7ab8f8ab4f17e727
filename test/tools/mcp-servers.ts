import { spawn } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { REPO_ROOT } from '../run/cli.js';

/** `@modelcontextprotocol/server-everything`: a real MCP server nobody here wrote. */
export const EVERYTHING = join(
  REPO_ROOT,
  'node_modules/@modelcontextprotocol/server-everything/dist/index.js',
);
/** Our own small stdio server (pagination, clashes, mixed content, `stubborn` mode). */
export const PAGED = join(REPO_ROOT, 'test/tools/fixtures/paged-mcp-server.mjs');

/**
 * `sh -c '<node> <script> <args>; exit $?'`: a wrapper like `npx` / `uvx`, with the server as a
 * grandchild (the trailing command keeps sh from exec-ing the server in its place).
 */
export function shWrapped(script: string, ...args: string[]): { command: string; args: string[] } {
  const line = [process.execPath, script, ...args].map((word) => `'${word}'`).join(' ');
  return { command: 'sh', args: ['-c', `${line}; exit $?`] };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** server-everything over HTTP on 127.0.0.1 (`/mcp` for streamable HTTP, `/sse` for SSE). */
export async function startEverything(
  mode: 'streamableHttp' | 'sse',
): Promise<{ port: number; stop: () => void }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, mode], {
    env: { PATH: process.env.PATH, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let log = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      if (/listening on port|running on port/.test(log)) resolve();
    });
    child.once('exit', () => reject(new Error(`server-everything exited: ${log}`)));
  });
  return { port, stop: () => child.kill('SIGKILL') };
}

/**
 * A server that accepts connections and never answers (`silent`), or answers an SSE request with
 * its headers only, never the `endpoint` event (`headers`). `pending()`: connections a request came
 * on that are still open (undici may open a spare one after an abort; it carries nothing).
 */
export async function startMute(mode: 'silent' | 'headers') {
  const sockets = new Set<Socket>();
  const pending = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      pending.delete(socket);
    });
    socket.on('error', () => {});
    socket.once('data', () => {
      pending.add(socket);
      if (mode === 'headers') socket.write('HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    pending: () => pending.size,
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
