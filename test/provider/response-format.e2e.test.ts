import { describe, expect, it } from 'vitest';
import { agentToml } from '../run/agents.js';
import { e2eHomes, runAxe } from '../run/cli.js';

/**
 * `[params] response_format` as each API can take it: Anthropic's structured output, a warning
 * where a wire has no equivalent, and a refusal before any request where the API would answer 400.
 */
const setup = e2eHomes();

const SCHEMA = [
  '[params.response_format]',
  'type = "json_schema"',
  '[params.response_format.schema]',
  'name = "verdict"',
  'type = "object"',
  'required = ["score"]',
  '[params.response_format.schema.properties.score]',
  'type = "integer"',
  'minimum = 1',
  'maximum = 5',
  '[params.response_format.schema.properties.notes]',
  'type = "array"',
  'minItems = 2',
  'items = { type = "string", maxLength = 80 }',
];

describe('response_format per wire', () => {
  it('Anthropic: a json_schema goes out as output_config.format in the subset the API accepts', async () => {
    const { home, fake } = await setup();
    home.agent('judge', agentToml('judge', { extra: SCHEMA }));
    fake.enqueue({ text: '{"score":4}' });
    const result = await runAxe(['run', 'judge', '--agents-dir', home.agentsDir, '-p', 'rate it'], {
      env: home.env(fake.url),
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(fake.rejections).toEqual([]);
    const body = fake.requests[0]?.body as Record<string, unknown>;
    expect(body.output_config).toEqual({
      format: {
        type: 'json_schema',
        schema: {
          type: 'object',
          required: ['score'],
          properties: {
            score: { type: 'integer', description: 'JSON Schema: {"minimum":1,"maximum":5}' },
            notes: {
              type: 'array',
              items: { type: 'string', description: 'JSON Schema: {"maxLength":80}' },
              description: 'JSON Schema: {"minItems":2}',
            },
          },
          additionalProperties: false,
        },
      },
    });
  });

  it('Anthropic: json_object has no equivalent: one warning, nothing sent for it; validate says so too', async () => {
    const { home, fake } = await setup();
    home.agent('judge', agentToml('judge', { extra: ['[params]', 'response_format = "json_object"'] }));
    fake.enqueue({ text: '{}' });
    const result = await runAxe(['run', 'judge', '--agents-dir', home.agentsDir, '-p', 'rate it'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(
      'Warning: [params] response_format "json_object" has no equivalent on the anthropic API and is not sent (a json_schema table is sent as structured output)\n',
    );
    expect(fake.requests[0]?.body).not.toHaveProperty('output_config');
    const validate = await runAxe(['validate', 'judge', '--agents-dir', home.agentsDir, '--json'], {
      env: home.env(fake.url),
    });
    expect(JSON.parse(validate.stdout).findings).toEqual([
      expect.objectContaining({ severity: 'warning', field: 'params.response_format' }),
    ]);
  });

  it('prompt_caching on another wire: one warning, the system prompt sent as a string; validate says so too', async () => {
    const { home, fake } = await setup();
    const extra = ['[params]', 'prompt_caching = true'];
    home.agent('cached', agentToml('cached', { model: 'openai/gpt-test', extra }));
    fake.enqueue({ text: 'ok' });
    const env = home.env(fake.url, { AXE_OPENAI_BASE_URL: `${fake.url}/v1`, OPENAI_API_KEY: 'k' });
    const result = await runAxe(['run', 'cached', '--agents-dir', home.agentsDir, '-p', 'x'], { env });
    expect(result).toMatchObject({ code: 0, stdout: 'ok' });
    expect(result.stderr).toBe(
      "Warning: [params] prompt_caching is Anthropic's cache breakpoint; the openai API has no such field and it is not sent\n",
    );
    expect(fake.requests[0]?.body).toMatchObject({
      messages: [{ role: 'system', content: 'ROLE:cached' }, {}],
    });
    const validate = await runAxe(['validate', 'cached', '--agents-dir', home.agentsDir, '--json'], { env });
    expect(JSON.parse(validate.stdout).findings).toEqual([
      expect.objectContaining({ severity: 'warning', field: 'params.prompt_caching' }),
    ]);
  });

  it('Gemini before 3: tools with a JSON response is exit 2 before any request; Gemini 3 sends it', async () => {
    const { home, fake } = await setup();
    const extra = ['tools = ["read_file"]', '[params]', 'response_format = "json_object"'];
    home.agent('old', agentToml('old', { model: 'google/gemini-2.5-flash', extra }));
    home.agent('new', agentToml('new', { model: 'google/gemini-3-flash-preview', extra }));
    const env = home.env(fake.url, { AXE_GOOGLE_BASE_URL: fake.url, GEMINI_API_KEY: 'k' });
    const refused = await runAxe(['run', 'old', '--agents-dir', home.agentsDir, '-p', 'x'], { env });
    expect(refused.code).toBe(2);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(
      'axe: [params] response_format: gemini-2.5-flash refuses a JSON response format together with tools (Gemini models before 3 answer 400); remove response_format or the tools, or use a Gemini 3 model\n',
    );
    expect(fake.requests).toEqual([]);
    const validate = await runAxe(['validate', 'old', '--agents-dir', home.agentsDir], { env });
    expect(validate.code).not.toBe(0);
    expect(validate.stdout + validate.stderr).toContain('gemini-2.5-flash refuses a JSON response format');

    fake.enqueue({ text: '{"ok":true}' });
    const sent = await runAxe(['run', 'new', '--agents-dir', home.agentsDir, '-p', 'x'], { env });
    expect(sent.code).toBe(0);
    expect(fake.requests[0]?.body).toMatchObject({
      generationConfig: { responseMimeType: 'application/json' },
    });
  });
});
