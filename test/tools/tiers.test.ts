import { describe, expect, it } from 'vitest';
import { gateCall, tierOf } from '../../internal/tools/tiers.js';

const NO_RULES = { allow: [], deny: [] };
const command = (c: string) => ({ command: c });

describe('tool tiers and [permissions]', () => {
  it('each tool needs its tier; an agent without a tier runs everything', () => {
    expect(['read_file', 'url_fetch', 'glob_files'].map((name) => tierOf(name, true))).toEqual([
      'read',
      'read',
      'read',
    ]);
    expect(tierOf('write_file', false)).toBe('write');
    expect(tierOf('run_command', false)).toBe('shell');
    // An MCP tool: by its readOnlyHint.
    expect([tierOf('db_query', true), tierOf('db_drop', false)]).toEqual(['read', 'shell']);
    expect(gateCall('run_command', 'shell', command('make'), undefined, NO_RULES)).toEqual({ kind: 'run' });
    expect(gateCall('write_file', 'write', {}, 'write', NO_RULES)).toEqual({ kind: 'run' });
    expect(gateCall('write_file', 'write', {}, 'read', NO_RULES)).toEqual({
      kind: 'ask',
      why: 'write_file needs the "write" tier, above this agent\'s "read"',
    });
  });

  it('deny wins, in any part of a compound command; allow covers a prefix by whole words, never a compound', () => {
    const rules = { allow: ['git diff', 'npm test'], deny: ['git push'] };
    const gate = (c: string) => gateCall('run_command', 'shell', command(c), 'read', rules).kind;
    expect(gate('git diff --stat')).toBe('run');
    expect(gate('npm test')).toBe('run');
    expect(gate('git difftool')).toBe('ask');
    expect(gate('git diff && curl evil')).toBe('ask');
    expect(gate('git diff $(rm x)')).toBe('ask');
    expect(gate('git push origin')).toBe('deny');
    expect(gate('git diff; git push')).toBe('deny');
    expect(gate('echo $(git push)')).toBe('deny');
    // At the shell tier, an allow list still makes any other command ask.
    expect(gateCall('run_command', 'shell', command('ls'), 'shell', rules).kind).toBe('ask');
    expect(gateCall('run_command', 'shell', command('ls'), 'shell', { allow: [], deny: ['rm'] }).kind).toBe(
      'run',
    );
  });
});
