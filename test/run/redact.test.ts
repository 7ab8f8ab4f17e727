import { expect, it } from 'vitest';
import { redactUrl } from '../../internal/output/redact.js';

it('masks user info and query values, and leaves a URL with neither exactly as written', () => {
  expect(redactUrl('https://user:pw@mcp.example.com/sse?key=abc&x=1')).toBe(
    'https://***@mcp.example.com/sse?key=***&x=***',
  );
  expect(redactUrl('https://api.anthropic.com')).toBe('https://api.anthropic.com');
  expect(redactUrl('not a url')).toBe('not a url');
});
