import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpPool, createProvider, type HttpPool } from '../../internal/provider/index.js';
import { conversation, FAST_RETRY, settingsFor } from './helpers.js';
import { listen, okReply as reply, shut } from './local-server.js';

/**
 * Connections opened ahead (`connections.ahead`): while an agent that delegates waits for its
 * model, the pool opens idle connections to the same server, and its children's requests go out
 * on them instead of connecting first.
 */

interface Watched {
  base: string;
  server: Server;
  /** Every connection accepted, in order. */
  sockets: Socket[];
  /** The connection each request came on (its index in `sockets`), in arrival order. */
  requestSockets: number[];
  /** Resolves once `count` connections have been accepted. */
  connected(count: number): Promise<void>;
}

const open: { server: Server; pool: HttpPool }[] = [];
afterEach(async () => {
  for (const { server, pool } of open.splice(0)) {
    await pool.close();
    await shut(server);
  }
});

/** A local OpenAI-wire server that answers "ok"; `hold` keeps the first request waiting until released. */
async function watchedServer(hold?: Promise<void>): Promise<Watched> {
  const sockets: Socket[] = [];
  const requestSockets: number[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  let first = true;
  const server = createServer((req, res) => {
    requestSockets.push(sockets.indexOf(req.socket));
    const held = first && hold ? hold : Promise.resolve();
    first = false;
    req.resume();
    req.on('end', () => {
      void held.then(() => res.writeHead(200, { 'content-type': 'application/json' }).end(reply));
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.push(socket);
    for (const waiter of waiters.filter((w) => sockets.length >= w.count)) waiter.resolve();
  });
  const base = await listen(server);
  return {
    base,
    server,
    sockets,
    requestSockets,
    connected: (count) =>
      sockets.length >= count
        ? Promise.resolve()
        : new Promise((resolve) => waiters.push({ count, resolve })),
  };
}

function setUp(watched: Watched) {
  const pool = createHttpPool();
  open.push({ server: watched.server, pool });
  const provider = createProvider(settingsFor('openai', watched.base), { retry: FAST_RETRY, pool });
  const signal = new AbortController().signal;
  return {
    pool,
    chat: (ahead?: number) =>
      provider.chat(conversation(false), {
        signal,
        ...(ahead ? { connections: { ahead, forCalls: () => 0 } } : {}),
      }),
  };
}

describe('connections opened ahead', () => {
  it('while a call is in flight, that many idle connections open; the next parallel calls use them and connect no more', async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const watched = await watchedServer(held);
    const { chat } = setUp(watched);
    const lead = chat(6);
    // The lead's answer is held until its connection and six more are open.
    await watched.connected(7);
    release();
    expect((await lead).content).toBe('ok');
    const children = await Promise.all(Array.from({ length: 6 }, () => chat()));
    expect(children.map((c) => c.content)).toEqual(Array(6).fill('ok'));
    expect(watched.sockets).toHaveLength(7);
    // The six children came on six different connections, none of them the lead's.
    const childSockets = watched.requestSockets.slice(1);
    expect(new Set(childSockets).size).toBe(6);
  });

  it('opens no more than asked: idle connections already kept count, and a second ask opens none', async () => {
    const watched = await watchedServer();
    const { chat } = setUp(watched);
    await Promise.all(Array.from({ length: 4 }, () => chat()));
    const before = watched.sockets.length;
    expect(before).toBe(4);
    // Four kept by the pool, one of them carrying the call: three idle, asking for three opens none.
    await chat(3);
    await chat(3);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(watched.sockets).toHaveLength(before);
    // Six asked: three more.
    await chat(6);
    await watched.connected(7);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(watched.sockets).toHaveLength(7);
  });

  it('a connection the server closes or resets before it is used is dropped: later calls connect anew and succeed', async () => {
    const watched = await watchedServer();
    const { chat } = setUp(watched);
    await chat(4);
    await watched.connected(4);
    // The server ends two of the connections no request came on (as an idle timeout would) and
    // resets the third: an error on an idle connection is nobody's failure.
    const unused = watched.sockets.filter((_, i) => !watched.requestSockets.includes(i));
    expect(unused).toHaveLength(3);
    await Promise.all(
      unused.map(
        (socket, i) =>
          new Promise((resolve) => {
            socket.once('close', resolve);
            if (i === 2) socket.resetAndDestroy();
            else socket.end();
          }),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    // The dropped ones no longer count: asking for three again opens three.
    await chat(3);
    await watched.connected(7);
    const replies = await Promise.all(Array.from({ length: 3 }, () => chat()));
    expect(replies.map((r) => r.content)).toEqual(['ok', 'ok', 'ok']);
    for (const index of watched.requestSockets.slice(1)) {
      expect(watched.sockets[index]?.destroyed).toBe(false);
    }
  });

  it('idle connections opened ahead close with the pool and do not keep the process alive', async () => {
    const watched = await watchedServer();
    const { chat, pool } = setUp(watched);
    await chat(5);
    await watched.connected(5);
    const closed = watched.sockets.map((socket) => new Promise((resolve) => socket.once('close', resolve)));
    // Unreferenced while idle: none of the pool's connections is among the handles that keep
    // this event loop alive (the server's ends of them are).
    const handles = (
      process as unknown as { _getActiveHandles(): { remotePort?: number }[] }
    )._getActiveHandles();
    const port = Number(new URL(watched.base).port);
    expect(handles.filter((h) => h.remotePort === port)).toHaveLength(0);
    await pool.close();
    await Promise.all(closed);
  });
});
