import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAgent } from '../../internal/agent/load.js';
import { dryRunView } from '../../internal/invocation/dry-run-view.js';
import { formatEntry } from '../../internal/memory/memory.js';
import { useHome } from '../runner/harness.js';

/** The dry-run view as a library call: resolved like a run, nothing written, warnings handed back. */
const t = useHome();

describe('dryRunView', () => {
  it("resolves the agent with the run's overrides and returns the memory's warning", async () => {
    const { home, llm } = t;
    const memory = path.join(home.root, 'viewer-memory.md');
    const entries = [0, 1, 2].map((i) =>
      formatEntry(new Date(Date.UTC(2026, 0, 1, 0, 0, i)), `task ${i}`, `result ${i}`).toString(),
    );
    fs.writeFileSync(memory, entries.join(''));
    home.agent(
      'viewer',
      `tools = ["read_file", "run_command"]\n[memory]\nenabled = true\npath = "${memory}"\nlast_n = 1\nmax_entries = 2`,
    );
    const spec = await loadAgent('viewer', { searchDirs: [home.agentsDir], env: home.env });
    const { view, warnings } = await dryRunView(
      spec,
      { configDir: home.configDir, env: home.env },
      { modelOverride: 'openai/gpt-test', workdirOverride: home.agentsDir },
      {},
    );
    expect(view).toMatchObject({
      model: 'openai/gpt-test',
      workdir: home.agentsDir,
      systemPrompt: expect.stringContaining('agent:viewer'),
      memory: entries[2],
      tools: ['read_file', 'run_command'],
      files: [],
    });
    expect(warnings).toEqual([
      `agent "viewer" memory has 3 entries (max_entries: 2). Run 'axe gc viewer' to trim.`,
    ]);
    expect(llm.requests).toEqual([]);
  });
});
