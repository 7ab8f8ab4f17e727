import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FAKE_AWS_ACCESS_KEY_ID, FAKE_AWS_SECRET_ACCESS_KEY } from '../fake-llm/bedrock-validate.js';
import { agentToml } from '../run/agents.js';
import { e2eHomes, runAxe } from '../run/cli.js';

/** Go axe's `bedrock` provider through the built binary: SigV4 the fake server verifies. */
const setup = e2eHomes();
const MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1:0';

describe.concurrent('bedrock', () => {
  it('a tool round trip on the Converse API, signed with the credentials from the environment', async () => {
    const { home, fake } = await setup();
    home.agent(
      'rock',
      agentToml('rock', { model: `bedrock/${MODEL}`, extra: ['tools = ["list_directory"]'] }),
    );
    fake.respond((request) =>
      request.toolResults.length === 0
        ? {
            toolCalls: [{ name: 'list_directory', arguments: { path: '.' } }],
            usage: { input: 40, output: 9 },
          }
        : { text: `listed: ${request.toolResults[0]?.content}`, usage: { input: 60, output: 5 } },
    );
    const env = home.env(undefined, {
      AWS_ACCESS_KEY_ID: FAKE_AWS_ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: FAKE_AWS_SECRET_ACCESS_KEY,
      AWS_REGION: 'eu-west-3',
      AXE_BEDROCK_BASE_URL: fake.url,
    });
    const args = ['run', 'rock', '--agents-dir', home.agentsDir, '-p', 'list', '--workdir', home.agentsDir];
    const result = await runAxe([...args, '--json', '--stream'], { env });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      content: 'listed: rock.toml',
      input_tokens: 100,
      output_tokens: 14,
      stop_reason: 'end_turn',
      provider: 'bedrock',
    });
    expect(fake.rejections).toEqual([]);
    // The model id's ":" is escaped in the path (and twice in what is signed).
    expect(fake.requests.map((r) => r.path)).toEqual([
      `/model/${encodeURIComponent(MODEL)}/converse`,
      `/model/${encodeURIComponent(MODEL)}/converse`,
    ]);
    expect(fake.requests[0]?.headers.authorization).toMatch(
      new RegExp(
        `^AWS4-HMAC-SHA256 Credential=${FAKE_AWS_ACCESS_KEY_ID}/\\d{8}/eu-west-3/bedrock/aws4_request, `,
      ),
    );
    expect(fake.requests[1]?.toolResults).toEqual([
      { callId: expect.any(String), content: 'rock.toml', isError: false },
    ]);
    expect(result.stdout + result.stderr).not.toContain(FAKE_AWS_SECRET_ACCESS_KEY);
  });

  it('credentials from the AWS_PROFILE profile of the credentials file, with its session token', async () => {
    const { home, fake } = await setup();
    const file = path.join(home.root, 'aws-credentials');
    writeFileSync(
      file,
      `[default]\naws_access_key_id = AKIDWRONG\naws_secret_access_key = wrong\n\n[work]\naws_access_key_id = ${FAKE_AWS_ACCESS_KEY_ID}\naws_secret_access_key = ${FAKE_AWS_SECRET_ACCESS_KEY}\naws_session_token = token-from-the-file\n`,
    );
    home.agent('rock', agentToml('rock', { model: `bedrock/${MODEL}` }));
    fake.enqueue({ text: 'hello from bedrock' });
    const env = home.env(undefined, {
      AWS_SHARED_CREDENTIALS_FILE: file,
      AWS_PROFILE: 'work',
      AWS_DEFAULT_REGION: 'us-west-2',
      AXE_BEDROCK_BASE_URL: fake.url,
    });
    const result = await runAxe(['run', 'rock', '--agents-dir', home.agentsDir, '-p', 'hi'], { env });
    expect(result).toMatchObject({ code: 0, stdout: 'hello from bedrock', stderr: '' });
    expect(fake.requests[0]?.headers['x-amz-security-token']).toBe('token-from-the-file');
    expect(fake.requests[0]?.headers.authorization).toContain('/us-west-2/bedrock/aws4_request');
  });

  it("Go's errors: no region (exit 2), no credentials (exit 1), a wrong secret (the signature is refused)", async () => {
    const { home, fake } = await setup();
    home.agent('rock', agentToml('rock', { model: `bedrock/${MODEL}` }));
    const base = ['run', 'rock', '--agents-dir', home.agentsDir, '-p', 'hi'];
    const noRegion = await runAxe(base, {
      env: home.env(undefined, { AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b' }),
    });
    expect(noRegion).toMatchObject({
      code: 2,
      stderr: 'axe: region for provider "bedrock" is not configured (set AWS_REGION or add to config.toml)\n',
    });
    const noCredentials = await runAxe(base, {
      env: home.env(undefined, { AWS_REGION: 'us-east-1', AXE_BEDROCK_BASE_URL: fake.url }),
    });
    expect(noCredentials.code).toBe(1);
    expect(noCredentials.stderr).toMatch(
      /^axe: AWS credentials not found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or configure ~\/\.aws\/credentials: /,
    );
    const wrongSecret = await runAxe(base, {
      env: home.env(undefined, {
        AWS_ACCESS_KEY_ID: FAKE_AWS_ACCESS_KEY_ID,
        AWS_SECRET_ACCESS_KEY: 'not-the-secret-at-all',
        AWS_REGION: 'us-east-1',
        AXE_BEDROCK_BASE_URL: fake.url,
      }),
    });
    expect(wrongSecret.code).toBe(3);
    expect(wrongSecret.stderr).toMatch(/HTTP 403.*signature we calculated does not match/);
    expect(wrongSecret.stderr).not.toContain('not-the-secret-at-all');
    expect(fake.requests).toHaveLength(1);
  });
});
