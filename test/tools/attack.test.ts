import {
  constants,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BUILTIN_TOOLS } from '../../internal/tools/index.js';
import { forbiddenReason } from '../../internal/tools/ip-ranges.js';
import { openInSandbox, resolveInSandbox } from '../../internal/tools/sandbox.js';
import { type CountingServer, startCountingServer } from './counting-server.js';
import { call, makeSandbox, toolContext } from './helpers.js';

/**
 * Escape attempts against the sandbox, the command guard and the URL guard. Every attempt must
 * come back as an error result, with nothing outside the workdir read or changed and no
 * connection reaching a forbidden address.
 */
const SECRET = 'TOP SECRET';
let box: ReturnType<typeof makeSandbox>;
let secretPath: string;

beforeEach(() => {
  box = makeSandbox();
  secretPath = join(box.outside, 'secret.txt');
  writeFileSync(secretPath, SECRET);
  mkdirSync(join(box.workdir, 'sub'));
  writeFileSync(join(box.workdir, 'sub', 'inner.txt'), 'inner');
  symlinkSync(box.outside, join(box.workdir, 'link')); // symlinked directory
  symlinkSync(secretPath, join(box.workdir, 'leak.txt')); // symlinked leaf
  symlinkSync(join(box.outside, 'ghost.txt'), join(box.workdir, 'dangling.txt')); // leaf to a missing file
});
afterEach(() => {
  // Nothing outside changed: the secret intact, no new file next to it.
  expect(readFileSync(secretPath, 'utf8')).toBe(SECRET);
  expect(existsSync(join(box.outside, 'new.txt'))).toBe(false);
  expect(existsSync(join(box.outside, 'ghost.txt'))).toBe(false);
  box.cleanup();
});

const { list_directory, read_file, write_file, edit_file, run_command, url_fetch } = BUILTIN_TOOLS;

function expectRefused(out: { content: string; isError: boolean }, mention: string | RegExp): void {
  expect(out.isError).toBe(true);
  expect(out.content).not.toContain(SECRET);
  expect(out.content).toMatch(mention);
}

describe('file tool escapes', () => {
  const fileAttempts: [string, () => [typeof read_file, Record<string, string>], RegExp][] = [
    [
      'read ../',
      () => [read_file, { path: '../outside/secret.txt' }],
      /"\.\.\/outside\/secret\.txt" escapes the workdir/,
    ],
    ['read absolute outside', () => [read_file, { path: secretPath }], /absolute paths are not allowed/],
    [
      'read absolute, even inside the workdir (Go axe rule)',
      () => [read_file, { path: join(box.workdir, 'sub', 'inner.txt') }],
      /absolute paths are not allowed/,
    ],
    [
      'read /etc/passwd',
      () => [read_file, { path: '/etc/passwd' }],
      /"\/etc\/passwd": absolute paths are not allowed/,
    ],
    ['read a/../../', () => [read_file, { path: 'sub/../../outside/secret.txt' }], /escapes the workdir/],
    [
      'read through a symlinked dir',
      () => [read_file, { path: 'link/secret.txt' }],
      /"link\/secret\.txt" leaves the workdir through a symlink/,
    ],
    ['read a symlinked leaf', () => [read_file, { path: 'leak.txt' }], /"leak\.txt" leaves the workdir/],
    ['read with a NUL byte', () => [read_file, { path: 'sub/inner.txt\0../../x' }], /NUL byte/],
    ['list ..', () => [list_directory, { path: '..' }], /escapes the workdir/],
    ['list a symlinked dir', () => [list_directory, { path: 'link' }], /"link" leaves the workdir/],
    ['write ../', () => [write_file, { path: '../outside/new.txt', content: 'x' }], /escapes the workdir/],
    [
      'write through a symlinked dir',
      () => [write_file, { path: 'link/new.txt', content: 'x' }],
      /leaves the workdir/,
    ],
    [
      'write a symlinked leaf',
      () => [write_file, { path: 'leak.txt', content: 'pwned' }],
      /"leak\.txt" leaves the workdir/,
    ],
    [
      'write a dangling symlink',
      () => [write_file, { path: 'dangling.txt', content: 'x' }],
      /"dangling\.txt"/,
    ],
    [
      'edit a symlinked leaf',
      () => [edit_file, { path: 'leak.txt', old_string: 'TOP', new_string: 'NOT' }],
      /leaves the workdir/,
    ],
    [
      'edit ../',
      () => [edit_file, { path: '../outside/secret.txt', old_string: 'TOP', new_string: 'NOT' }],
      /escapes/,
    ],
  ];
  for (const [name, attempt, mention] of fileAttempts) {
    it(name, async () => {
      const [tool, args] = attempt();
      expectRefused(await call(tool, args, toolContext(box.workdir)), mention);
    });
  }

  it('a directory swapped for a symlink between check and use is refused (read)', async () => {
    const checked = await resolveInSandbox(box.workdir, 'sub/inner.txt');
    mkdirSync(join(box.outside, 'sub'));
    writeFileSync(join(box.outside, 'sub', 'inner.txt'), SECRET);
    renameSync(join(box.workdir, 'sub'), join(box.workdir, 'sub-old'));
    symlinkSync(join(box.outside, 'sub'), join(box.workdir, 'sub'));
    await expect(openInSandbox(box.workdir, checked, constants.O_RDONLY, 'sub/inner.txt')).rejects.toThrow(
      /"sub\/inner\.txt" changed between check and use/,
    );
  });

  it('a directory swapped for a symlink between check and use is refused (create), leaving nothing', async () => {
    const checked = await resolveInSandbox(box.workdir, 'sub/new.txt');
    renameSync(join(box.workdir, 'sub'), join(box.workdir, 'sub-old'));
    symlinkSync(box.outside, join(box.workdir, 'sub'));
    const flags = constants.O_WRONLY | constants.O_CREAT;
    await expect(openInSandbox(box.workdir, checked, flags, 'sub/new.txt')).rejects.toThrow(
      /changed between check/,
    );
  });

  it('a leaf swapped for a symlink between check and use is refused', async () => {
    const checked = await resolveInSandbox(box.workdir, 'sub/inner.txt');
    renameSync(join(box.workdir, 'sub', 'inner.txt'), join(box.workdir, 'sub', 'old.txt'));
    symlinkSync(secretPath, join(box.workdir, 'sub', 'inner.txt'));
    await expect(openInSandbox(box.workdir, checked, constants.O_RDWR, 'sub/inner.txt')).rejects.toThrow(
      /"sub\/inner\.txt" is a symlink/,
    );
  });

  it('symlinks that stay inside the workdir still work', async () => {
    symlinkSync(join(box.workdir, 'sub'), join(box.workdir, 'alias'));
    const out = await call(read_file, { path: 'alias/inner.txt' }, toolContext(box.workdir));
    expect(out).toEqual({ content: '1: inner', isError: false });
  });
});

describe('run_command escapes', () => {
  const commands: [string, RegExp][] = [
    ['cat /etc/passwd', /absolute path "\/etc\/passwd" is outside the working directory/],
    ['cat ../outside/secret.txt', /parent traversal in "\.\.\/outside\/secret\.txt"/],
    ['cat ~/.ssh/id_rsa', /home directory expansion "~\/\.ssh\/id_rsa"/],
    ['cat ~root/.profile', /home directory expansion "~root\/\.profile"/],
    ['echo pwned > /tmp/evil', /"\/tmp\/evil"/],
    ['FOO=/etc/passwd; cat "$FOO"', /"\/etc\/passwd"/],
    ['cat</etc/passwd', /"\/etc\/passwd"/],
    ['grep -r x -f/etc/passwd .', /"\/etc\/passwd"/],
    ['cd .. && cat outside/secret.txt', /parent traversal in "\.\."/],
    ['ln -s / root && cat root/etc/passwd', /absolute path "\/"/],
    ['echo ok; cat "/etc/shadow"', /"\/etc\/shadow"/],
  ];
  for (const [command, mention] of commands) {
    it(command, async () => {
      expectRefused(await call(run_command, { command }, toolContext(box.workdir)), mention);
    });
  }

  it('relative paths, URLs and /dev/null pass the guard', async () => {
    const ok = await call(
      run_command,
      {
        command:
          'cat sub/inner.txt > /dev/null && echo https://example.com/etc/passwd && cat sub/../sub/inner.txt',
      },
      toolContext(box.workdir),
    );
    expect(ok).toEqual({ content: 'https://example.com/etc/passwd\ninner', isError: false });
  });

  it('no API key reaches a command; HOME and TMPDIR are the workdir', async () => {
    const env = {
      PATH: process.env.PATH,
      ANTHROPIC_API_KEY: 'sk-ant-secret',
      OPENAI_API_KEY: 'sk-secret',
      TAVILY_API_KEY: 'tvly-secret',
      AWS_SECRET_ACCESS_KEY: 'aws-secret',
      HOME: '/home/someone',
    };
    const out = await call(run_command, { command: 'env' }, toolContext(box.workdir, { env }));
    expect(out.isError).toBe(false);
    expect(out.content).not.toMatch(/secret|KEY/i);
    expect(out.content).toContain(`HOME=${box.workdir}`);
    expect(out.content).toContain(`TMPDIR=${box.workdir}`);
  });
});

describe('url_fetch escapes', () => {
  let server: CountingServer;
  let other: CountingServer;
  beforeAll(async () => {
    server = await startCountingServer((req, res) => {
      const to = new URL(req.url ?? '/', 'http://x').searchParams.get('to');
      if (to) {
        res.writeHead(302, { location: to.replace('OTHER', String(other.port)) });
        res.end();
      } else res.end('reached');
    });
    other = await startCountingServer();
  });
  afterAll(async () => {
    await server.close();
    await other.close();
  });

  const forbidden: [string, RegExp][] = [
    ['http://127.0.0.1:PORT/', /address 127\.0\.0\.1 is a loopback address/],
    [
      'http://localhost:PORT/',
      /host "localhost" resolves to (127\.0\.0\.1|::1), which is a loopback address/,
    ],
    ['http://2130706433:PORT/', /127\.0\.0\.1 is a loopback/],
    ['http://0x7f.1:PORT/', /127\.0\.0\.1 is a loopback/],
    ['http://017700000001:PORT/', /127\.0\.0\.1 is a loopback/],
    ['http://[::ffff:127.0.0.1]:PORT/', /::ffff:7f00:1 is a loopback/],
    ['http://[::1]:PORT/', /::1 is a loopback/],
    ['http://[::]:PORT/', /is a unspecified address/],
    ['http://0.0.0.0/', /this-network/],
    ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254 is a link-local/],
    ['http://[::ffff:a9fe:a9fe]/', /link-local/],
    ['http://10.1.2.3/', /private/],
    ['http://172.16.0.1/', /private/],
    ['http://192.168.1.1/', /private/],
    ['http://100.64.0.1/', /carrier-grade NAT/],
    ['http://224.0.0.1/', /multicast/],
    ['http://255.255.255.255/', /reserved/],
    ['http://[fe80::1]/', /link-local/],
    ['http://[fd00::1]/', /unique local/],
    ['http://[64:ff9b::7f00:1]/', /loopback/],
    ['http://[2002:7f00:1::]/', /loopback/],
    ['file:///etc/passwd', /unsupported scheme "file"/],
  ];
  it.each(forbidden)('refuses %s without connecting', async (url, mention) => {
    const out = await call(
      url_fetch,
      { url: url.replace('PORT', String(server.port)) },
      toolContext(box.workdir),
    );
    expectRefused(out, mention);
    expect(server.connections()).toBe(0);
  });

  it('re-checks every redirect hop: a redirect to a private address is refused before connecting', async () => {
    const env = { AXE_ALLOW_PRIVATE_HOSTS: '1' };
    for (const to of ['http://169.254.169.254/', 'http://10.0.0.1/', 'http://[::ffff:192.168.0.1]/']) {
      const url = `${server.url}/?to=${encodeURIComponent(to)}`;
      const out = await call(url_fetch, { url }, toolContext(box.workdir, { env }));
      expectRefused(out, /refused/);
    }
  });

  it('a redirect to a host outside allowed_hosts is refused and never reached', async () => {
    const env = { AXE_ALLOW_PRIVATE_HOSTS: '1' };
    const url = `${server.url}/?to=${encodeURIComponent('http://localhost:OTHER/')}`;
    const out = await call(
      url_fetch,
      { url },
      toolContext(box.workdir, { env, allowedHosts: ['127.0.0.1'] }),
    );
    expectRefused(out, /host "localhost" is not in allowed_hosts/);
    expect(other.connections()).toBe(0);
  });

  it('the loopback opt-in opens loopback only, not the other private ranges', async () => {
    const env = { AXE_ALLOW_PRIVATE_HOSTS: '1' };
    expect(await call(url_fetch, { url: `${server.url}/` }, toolContext(box.workdir, { env }))).toEqual({
      content: 'reached',
      isError: false,
    });
    expectRefused(
      await call(url_fetch, { url: 'http://192.168.0.1/' }, toolContext(box.workdir, { env })),
      /private/,
    );
  });
});

describe('address classification (properties)', () => {
  const octet = fc.integer({ min: 0, max: 255 });
  it('every 127/8, 10/8 and 169.254/16 address is refused, also IPv4-mapped', () => {
    fc.assert(
      fc.property(fc.constantFrom('127', '10', '169.254'), octet, octet, octet, (prefix, a, b, c) => {
        const v4 = [...prefix.split('.'), a, b, c].slice(0, 4).join('.');
        const [w, x, y, z] = v4.split('.').map(Number) as [number, number, number, number];
        const mapped = `::ffff:${((w << 8) | x).toString(16)}:${((y << 8) | z).toString(16)}`;
        return forbiddenReason(v4) !== undefined && forbiddenReason(mapped) !== undefined;
      }),
    );
  });

  it('public addresses pass', () => {
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8', '93.184.216.34']) {
      expect(forbiddenReason(address)).toBeUndefined();
    }
  });
});
