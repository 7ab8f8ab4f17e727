import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { REPO_ROOT } from '../run/cli.js';

const fixtures = path.join(REPO_ROOT, 'test/provider/fixtures');
/** The test certificate (CN localhost): axe trusts it with NODE_EXTRA_CA_CERTS. */
export const LOCALHOST_CERT = path.join(fixtures, 'localhost-cert.pem');

/** A local TLS server answering every request with one Anthropic message saying `text`. */
export async function startTlsAnthropic(text: string): Promise<{ server: Server; url: string }> {
  const server = createServer(
    { key: readFileSync(path.join(fixtures, 'localhost-key.pem')), cert: readFileSync(LOCALHOST_CERT) },
    (request, response) => {
      request.resume();
      request.on('end', () =>
        response.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: 'msg_1',
            type: 'message',
            role: 'assistant',
            model: 'claude-test',
            content: [{ type: 'text', text }],
            stop_reason: 'end_turn',
            stop_sequence: null,
            usage: { input_tokens: 3, output_tokens: 2 },
          }),
        ),
      );
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `https://localhost:${(server.address() as AddressInfo).port}` };
}
