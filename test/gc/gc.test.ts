import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAgent } from '../../internal/agent/load.js';
import { analyseMemory, entriesKept, readAgentMemory, trimAgentMemory } from '../../internal/gc/gc.js';
import { countEntries, formatEntry } from '../../internal/memory/memory.js';
import type { RunEvent } from '../../internal/runner/events.js';
import { useHome } from '../runner/harness.js';

/** gc as a library: no CLI, no stdout; the real runner against the fake server, a real memory file. */
const t = useHome();

describe('internal/gc', () => {
  it("reads an agent's memory, analyses it with Go's one call, trims it to last_n", async () => {
    const { home, llm } = t;
    const file = path.join(home.root, 'keeper-memory.md');
    const entries = Array.from({ length: 5 }, (_, i) =>
      formatEntry(new Date(Date.UTC(2026, 0, 1, 0, 0, i)), `task ${i}`, `result ${i}`).toString(),
    );
    fs.writeFileSync(file, entries.join(''));
    home.agent('keeper', `tools = ["read_file"]\n[memory]\nenabled = true\npath = "${file}"\nlast_n = 2`);
    const spec = await loadAgent('keeper', { searchDirs: [home.agentsDir], env: home.env });

    const memory = await readAgentMemory(spec, home.env);
    expect(memory).toEqual({ file, log: entries.join(''), count: 5 });

    llm.respond(() => ({ text: '## Patterns Found\nNone.' }));
    const events: RunEvent[] = [];
    const report = await analyseMemory(spec, memory.log, {
      searchDirs: [home.agentsDir],
      configDir: home.configDir,
      env: home.env,
      emit: (event) => events.push(event),
    });
    expect(report).toBe('## Patterns Found\nNone.');
    expect(llm.requests).toHaveLength(1);
    const [request] = llm.requests;
    expect(request?.system).toMatch(/^You are a memory analyst for an AI agent\./);
    expect(request?.lastUserText).toBe(memory.log);
    expect(request?.toolNames).toEqual([]);
    expect(request?.body).toMatchObject({ temperature: 0.3, max_tokens: 4096 });
    expect(events.some((event) => event.type === 'agent.end')).toBe(true);

    expect(entriesKept(spec)).toBe(2);
    expect(await trimAgentMemory(file, entriesKept(spec))).toBe(3);
    expect(fs.readFileSync(file, 'utf8')).toBe(entries.slice(3).join(''));
    expect(countEntries(fs.readFileSync(file, 'utf8'))).toBe(2);
  });
});
