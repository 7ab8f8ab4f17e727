import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A local HTTP server that counts every TCP connection it accepts. */
export interface CountingServer {
  url: string;
  port: number;
  connections: () => number;
  close: () => Promise<void>;
}

export async function startCountingServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end('reached'),
): Promise<CountingServer> {
  let count = 0;
  const server: Server = createServer(handler);
  server.on('connection', () => {
    count++;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    connections: () => count,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
