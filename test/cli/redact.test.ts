import { expect, it } from 'vitest';
import { redactArgs, redactUrl, redactValue } from '../../internal/redact.js';

it('masks user info and query values, and leaves a URL with neither exactly as written', () => {
  expect(redactUrl('https://user:pw@mcp.example.com/sse?key=abc&x=1')).toBe(
    'https://***@mcp.example.com/sse?key=***&x=***',
  );
  expect(redactUrl('https://api.anthropic.com')).toBe('https://api.anthropic.com');
  expect(redactUrl('not a url')).toBe('not a url');
});

it('masks literal secrets in header / env values and after secret-looking flags', () => {
  const fromEnv = ['Bearer $', '{TOKEN}'].join('');
  expect(redactValue(fromEnv)).toBe(fromEnv);
  expect(redactValue('Bearer sk-live-123')).toBe('***');
  expect(redactArgs(['serve', '--api-key', 'sk-1', '--token=t-2', '--port', '80'])).toEqual([
    'serve',
    '--api-key',
    '***',
    '--token=***',
    '--port',
    '80',
  ]);
});
