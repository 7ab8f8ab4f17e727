import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentSearchDirs, resolvePaths } from '../../internal/config/paths.js';

describe('resolvePaths', () => {
  it('uses the XDG variables when they are absolute', () => {
    const paths = resolvePaths({
      HOME: '/home/u',
      XDG_CONFIG_HOME: '/x/c',
      XDG_DATA_HOME: '/x/d',
      XDG_CACHE_HOME: '/x/k',
    });
    expect(paths).toEqual({ configDir: '/x/c/axe', dataDir: '/x/d/axe', cacheDir: '/x/k/axe' });
  });

  it('falls back to ~/.config, ~/.local/share and ~/.cache, ignoring relative XDG values', () => {
    const paths = resolvePaths({ HOME: '/home/u', XDG_CONFIG_HOME: 'relative/dir' });
    expect(paths).toEqual({
      configDir: '/home/u/.config/axe',
      dataDir: '/home/u/.local/share/axe',
      cacheDir: '/home/u/.cache/axe',
    });
  });
});

describe('agentSearchDirs', () => {
  it("puts --agents-dir first (in order), then ./axe/agents, the project's Claude / Gemini / opencode agents, then <config>/agents, without duplicates", () => {
    const dirs = agentSearchDirs({
      flagDirs: ['one', '/abs/two', 'one'],
      cwd: '/work',
      configDir: '/cfg/axe',
    });
    expect(dirs).toEqual([
      '/work/one',
      '/abs/two',
      join('/work', 'axe', 'agents'),
      '/work/.claude/agents',
      '/work/.gemini/agents',
      '/work/.opencode/agent',
      '/work/.opencode/agents',
      '/cfg/axe/agents',
    ]);
  });
});
