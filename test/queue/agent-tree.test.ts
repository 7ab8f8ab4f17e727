import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadAgent, loadAgentFile } from '../../internal/agent/load.js';
import type { AgentSpec } from '../../internal/agent/spec.js';
import { loadGlobalConfig } from '../../internal/config/global.js';
import { ConfigError } from '../../internal/errors.js';
import {
  type AgentTree,
  checkManifest,
  collectTree,
  copyWorkdir,
  materializeTree,
  StoredTreeError,
  TREE_LIMIT_BYTES,
  treeDigest,
} from '../../internal/queue/agent-tree.js';
import { resolveAgentRun } from '../../internal/runner/resolve.js';
import { runTopLevel } from '../../internal/runner/top-level.js';
import { childScript } from '../child-script.js';
import { startFakeLlm } from '../fake-llm/index.js';
import { agentOf, callAgent } from '../runner/harness.js';
import { tempDirForFile } from '../temp-dir.js';

/** Files under `root`, made with their directories. */
function write(root: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

/**
 * A project as a user has it: a TOML lead with a skill (a folder), context files and two
 * sub-agents, a Markdown one (which calls the lead back, and has a skill of its own) and a TOML one
 * that works in a subfolder; a sub-agent that is nowhere; a config dir with a skill.
 */
function project(): { cwd: string; configDir: string; searchDirs: string[] } {
  const root = realpathSync(tempDirForFile('axe-tree-'));
  const cwd = join(root, 'project');
  const configDir = join(root, 'config');
  write(cwd, {
    'axe/agents/lead.toml':
      'name = "lead"\nmodel = "openai/gpt-test"\nsystem_prompt = "Lead."\nskill = "writing"\nfiles = ["docs/*.md"]\n' +
      'sub_agents = ["helper", "checker", "ghost"]\n',
    'axe/agents/helper.md':
      '---\nname: helper\ndescription: Helps\nmodel: openai/gpt-test\ntools: Read, Agent(lead)\nskills: [review]\n' +
      'files: ["notes.txt"]\n---\nYou help.\n',
    'axe/agents/checker.toml':
      'name = "checker"\nmodel = "openai/gpt-test"\nworkdir = "sub"\nfiles = ["*.txt"]\nsub_agents = ["yamly", "codexy"]\n',
    'axe/agents/yamly.yaml': 'name: yamly\nmodel: openai/gpt-test\nsystem_prompt: Yaml.\nfiles: ["*.md"]\n',
    'axe/agents/codexy.yaml':
      'agentType: codexy\nmodelConfig: { model: openai/gpt-test }\npromptConfig: { systemPrompt: Codex. }\n',
    'docs/a.md': 'alpha',
    'docs/b.md': 'beta',
    'docs/binary.md': 'bin\0ary',
    'notes.txt': 'notes',
    'sub/check.txt': 'check me',
    'sub/other.md': 'not matched',
    'unrelated.txt': 'never stored',
  });
  write(configDir, {
    'skills/writing/SKILL.md': 'Write well.',
    'skills/writing/examples.md': 'not read by a run',
    'skills/review/SKILL.md': 'Review well.',
    'config.toml': '[providers.openai]\napi_key = "sk-never-stored"\n',
  });
  return { cwd, configDir, searchDirs: [join(cwd, 'axe', 'agents'), join(configDir, 'agents')] };
}

/** What a run of `spec` puts in its system prompt, resolved as the runner does. */
async function promptOf(spec: AgentSpec, configDir: string, cwd: string): Promise<string> {
  return (await resolveAgentRun(spec, { configDir, cwd, env: {} })).systemPrompt;
}

function blobReader(tree: AgentTree, reads: string[] = []): (sha256: string) => Promise<Buffer> {
  return async (sha256) => {
    reads.push(sha256);
    const blob = tree.blobs.get(sha256);
    if (!blob) throw new Error(`no blob ${sha256}`);
    return blob;
  };
}

describe('collectTree and materializeTree', () => {
  it('stores the agent, its sub-agents, skills and context files, and a worker runs them from the copy alone', async () => {
    const { cwd, configDir, searchDirs } = project();
    const lead = await loadAgent('lead', { searchDirs, env: {} });
    const original = {
      lead: await promptOf(lead, configDir, cwd),
      helper: await promptOf(await loadAgent('helper', { searchDirs, env: {} }), configDir, cwd),
      checker: await promptOf(await loadAgent('checker', { searchDirs, env: {} }), configDir, cwd),
      codexy: await promptOf(await loadAgent('codexy', { searchDirs, env: {} }), configDir, cwd),
    };
    const tree = await collectTree(lead, { searchDirs, configDir, env: {}, cwd });
    expect(tree.manifest.files.map(({ path, role }) => [path, role])).toEqual([
      ['agent/lead.toml', 'agent'],
      ['agents/checker.toml', 'agent'],
      ['agents/codexy.yaml', 'agent'],
      ['agents/helper.md', 'agent'],
      ['agents/lead.toml', 'agent'],
      ['agents/yamly.yaml', 'agent'],
      ['config/skills/review/SKILL.md', 'skill'],
      ['config/skills/writing/SKILL.md', 'skill'],
      ['work/docs/a.md', 'context'],
      ['work/docs/b.md', 'context'],
      ['work/notes.txt', 'context'],
      ['work/sub/check.txt', 'context'],
      // The YAML agent has no workdir: it runs in its caller's (sub/) or in the one axe runs in.
      ['work/sub/other.md', 'context'],
    ]);
    expect(tree.manifest.dirs).toEqual(['work', 'work/sub']);
    // The lead's file is stored once, under both of its paths.
    expect(tree.blobs.size).toBe(12);
    expect(tree.manifest.digest).toBe(treeDigest(tree.manifest));
    const again = await collectTree(lead, { searchDirs, configDir, env: {}, cwd });
    expect(again.manifest.digest).toBe(tree.manifest.digest);
    expect([...tree.blobs.values()].some((blob) => blob.includes('sk-never-stored'))).toBe(false);

    // The enqueuing machine's files are gone: the worker has only the stored tree.
    const manifest = JSON.parse(JSON.stringify(tree.manifest));
    rmSync(dirname(cwd), { recursive: true, force: true });
    const root = join(tempDirForFile('axe-worker-'), 'trees');
    const stored = await materializeTree(manifest, blobReader(tree), root);
    expect(stored.dir).toBe(join(root, tree.manifest.digest));

    const storedLead = await loadAgentFile(stored.agentFile, {});
    expect(storedLead).toMatchObject({
      name: 'lead',
      model: lead.model,
      systemPrompt: lead.systemPrompt,
      skill: lead.skill,
      files: lead.files,
      subAgents: lead.subAgents,
    });
    expect(await promptOf(storedLead, stored.configDir, stored.workdir)).toBe(original.lead);
    const helper = await loadAgent('helper', { searchDirs: stored.searchDirs, env: {} });
    expect(await promptOf(helper, stored.configDir, stored.workdir)).toBe(original.helper);
    const checker = await loadAgent('checker', { searchDirs: stored.searchDirs, env: {} });
    expect(await promptOf(checker, stored.configDir, stored.workdir)).toBe(original.checker);
    const codexy = await loadAgent('codexy', { searchDirs: stored.searchDirs, env: {} });
    expect(codexy.dialect).toBe('codex');
    expect(await promptOf(codexy, stored.configDir, stored.workdir)).toBe(original.codexy);
    await expect(loadAgent('ghost', { searchDirs: stored.searchDirs, env: {} })).rejects.toThrow(
      'agent config not found: ghost',
    );

    // Owner-only: 0700 directories, 0600 files.
    expect(statSync(root).mode & 0o777).toBe(0o700);
    expect(statSync(stored.workdir).mode & 0o777).toBe(0o700);
    expect(statSync(join(stored.workdir, 'sub')).mode & 0o777).toBe(0o700);
    expect(statSync(stored.agentFile).mode & 0o777).toBe(0o600);
    expect(readdirSync(root)).toEqual([tree.manifest.digest]);
  });

  it('carries --skill and --workdir, and a tree already there is used without writing it again', async () => {
    const { cwd, configDir, searchDirs } = project();
    write(cwd, { 'sub/docs/s.md': 'in sub' });
    const lead = await loadAgent('lead', { searchDirs, env: {} });
    const tree = await collectTree(lead, {
      searchDirs,
      configDir,
      env: {},
      cwd,
      skill: 'review',
      workdir: 'sub',
    });
    const paths = tree.manifest.files.map((file) => file.path);
    // --skill is the top-level run's; the lead called back by its helper reads its own skill.
    expect(paths.filter((path) => path.startsWith('config/'))).toEqual([
      'config/skills/review/SKILL.md',
      'config/skills/writing/SKILL.md',
    ]);
    const reviewOnly = await collectTree(await loadAgent('checker', { searchDirs, env: {} }), {
      searchDirs,
      configDir,
      env: {},
      cwd,
      skill: 'review',
    });
    expect(
      reviewOnly.manifest.files.filter((file) => file.role === 'skill').map((file) => file.path),
    ).toEqual(['config/skills/review/SKILL.md']);
    // The top-level lead reads docs/*.md in sub/; the helper, and the lead it calls back, may run
    // in their caller's directory (call_agent) or in the one axe runs in (delegate_task): both kept.
    expect(paths.filter((path) => path.startsWith('work/'))).toEqual([
      'work/docs/a.md',
      'work/docs/b.md',
      'work/notes.txt',
      'work/sub/check.txt',
      'work/sub/docs/s.md',
      'work/sub/other.md',
    ]);
    expect(tree.manifest.dirs).toEqual(['work', 'work/sub']);

    const root = tempDirForFile('axe-worker-');
    const reads: string[] = [];
    const first = await materializeTree(tree.manifest, blobReader(tree, reads), root);
    const before = statSync(first.agentFile, { bigint: true });
    expect(reads).toHaveLength(tree.blobs.size);
    const second = await materializeTree(tree.manifest, blobReader(tree, reads), root);
    expect(second).toEqual(first);
    expect(reads).toHaveLength(tree.blobs.size);
    const after = statSync(first.agentFile, { bigint: true });
    expect([after.ino, after.mtimeNs]).toEqual([before.ino, before.mtimeNs]);
  });

  it('refuses what a worker cannot have, naming the agent file and the field', async () => {
    const { cwd, configDir, searchDirs } = project();
    const dir = join(cwd, 'axe', 'agents');
    const refusal = async (file: string, content: string, extra: { workdir?: string } = {}) => {
      writeFileSync(join(dir, file), `name = "${file.replace('.toml', '')}"\n${content}`);
      const spec = await loadAgentFile(join(dir, file), {});
      const error = await collectTree(spec, { searchDirs, configDir, env: {}, cwd, ...extra }).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(ConfigError);
      return (error as Error).message;
    };
    expect(
      await refusal('abs.toml', `model = "openai/m"\nskill = "${configDir}/skills/writing/SKILL.md"\n`),
    ).toBe(
      `${dir}/abs.toml: skill: "${configDir}/skills/writing/SKILL.md" is an absolute path, which a worker cannot have: give it relative to the config directory ${configDir}, or by name`,
    );
    expect(await refusal('out.toml', 'model = "openai/m"\nskill = "../elsewhere/SKILL.md"\n')).toBe(
      `${dir}/out.toml: skill: "../elsewhere/SKILL.md" is outside the config directory ${configDir}, which a worker cannot have`,
    );
    expect(
      await refusal('absdir.toml', `model = "openai/m"\nworkdir = "${cwd}/docs"\nfiles = ["*.md"]\n`),
    ).toBe(
      `${dir}/absdir.toml: files: context files under an absolute workdir (${cwd}/docs) cannot be stored for a worker, which would read its own disk: give the workdir relative to ${cwd}`,
    );
    expect(await refusal('up.toml', 'model = "openai/m"\nworkdir = ".."\n')).toBe(
      `${dir}/up.toml: workdir: ".." is outside ${cwd}, the directory axe runs in, so a worker cannot have it: give a workdir inside it, or an absolute one`,
    );
    expect(await refusal('flag.toml', 'model = "openai/m"\n', { workdir: '..' })).toMatch(
      /^--workdir: "\.\." is outside /,
    );
    // A sub-agent's refusal names the sub-agent's own file.
    write(dir, { 'far.toml': 'name = "far"\nmodel = "openai/m"\nskill = "/etc/skill.md"\n' });
    expect(await refusal('caller.toml', 'model = "openai/m"\nsub_agents = ["far"]\n')).toMatch(
      new RegExp(`^${dir}/far\\.toml: skill: "/etc/skill\\.md" is an absolute path`),
    );
    // What the run itself refuses, the tree refuses in the run's words.
    expect(await refusal('noskill.toml', 'model = "openai/m"\nskill = "missing"\n')).toBe(
      `${dir}/noskill.toml: skill "missing" not found: ${configDir}/skills/missing/SKILL.md`,
    );
    expect(await refusal('gone.toml', 'model = "openai/m"\nworkdir = "gone"\n')).toBe(
      `${dir}/gone.toml: workdir: not a directory: ${cwd}/gone`,
    );
    // Under an absolute workdir, `files` would be read on the worker's disk, even when nothing matches here.
    expect(
      await refusal('elsewhere.toml', 'model = "openai/m"\nworkdir = "/nowhere/here"\nfiles = ["*.md"]\n'),
    ).toMatch(/^.*elsewhere\.toml: files: context files under an absolute workdir \(\/nowhere\/here\)/);
    // An absolute workdir without context files is the worker's own directory (it need not exist here).
    writeFileSync(
      join(dir, 'shared.toml'),
      'name = "shared"\nmodel = "openai/m"\nworkdir = "/nowhere/here"\n',
    );
    const shared = await collectTree(await loadAgentFile(join(dir, 'shared.toml'), {}), {
      searchDirs,
      configDir,
      env: {},
      cwd,
    });
    expect(shared.manifest.dirs).toEqual(['work']);
  });

  it(`refuses a tree over ${TREE_LIMIT_BYTES / 2 ** 20} MiB in all`, async () => {
    const { cwd, configDir, searchDirs } = project();
    const dir = join(cwd, 'axe', 'agents');
    // Five agents, each with almost 16 MiB of context files (the most one agent may have): the
    // fifth one's first file goes over.
    const names = ['w1', 'w2', 'w3', 'w4', 'w5'];
    for (const [n, name] of names.entries()) {
      for (let i = 0; i < 4; i++) {
        write(cwd, { [`${name}/f${i}.txt`]: String.fromCharCode(65 + n * 4 + i).repeat(4 * 2 ** 20 - 1024) });
      }
      write(dir, {
        [`${name}.toml`]: `name = "${name}"\nmodel = "openai/m"\nworkdir = "${name}"\nfiles = ["*.txt"]\n`,
      });
    }
    write(dir, { 'big.toml': `name = "big"\nmodel = "openai/m"\nsub_agents = ${JSON.stringify(names)}\n` });
    const spec = await loadAgentFile(join(dir, 'big.toml'), {});
    await expect(collectTree(spec, { searchDirs, configDir, env: {}, cwd })).rejects.toThrow(
      new ConfigError(
        `${dir}/w5.toml: files: f0.txt: the agent tree (agent files, skills and context files) is larger than 64 MiB in all, too large to store for workers`,
      ),
    );
  });
});

describe('materializeTree on a worker', () => {
  it('refuses a manifest that would write outside its tree or a blob that is not its sha256, and stops on Ctrl-C', async () => {
    const { cwd, configDir, searchDirs } = project();
    const tree = await collectTree(await loadAgent('lead', { searchDirs, env: {} }), {
      searchDirs,
      configDir,
      env: {},
      cwd,
    });
    const root = tempDirForFile('axe-worker-');
    const outside = structuredClone(tree.manifest);
    (outside.files[6] as { path: string }).path = 'work/../../../etc/x';
    outside.digest = treeDigest(outside);
    await expect(materializeTree(outside, blobReader(tree), root)).rejects.toThrow(
      new StoredTreeError('stored agent tree: unsafe path "work/../../../etc/x"'),
    );
    const forged = { ...tree.manifest, agent: 'other' };
    expect(() => checkManifest(forged)).toThrow(/does not match its content/);
    const corrupt = async (sha256: string) =>
      Buffer.concat([await blobReader(tree)(sha256), Buffer.from(' changed')]);
    await expect(materializeTree(tree.manifest, corrupt, root)).rejects.toThrow(StoredTreeError);
    // Ctrl-C while the blobs are read: nothing more is read, and the run's reason is the error.
    const controller = new AbortController();
    const reads: string[] = [];
    const stopping = async (sha256: string) => {
      controller.abort(new Error('stopped'));
      return blobReader(tree, reads)(sha256);
    };
    await expect(
      materializeTree(tree.manifest, stopping, root, { signal: controller.signal }),
    ).rejects.toThrow('stopped');
    expect(reads).toHaveLength(1);
    // Nothing half-written is left to be taken for a tree.
    expect(readdirSync(root)).toEqual([]);
  });

  it("gives a batch its own copy of the tree's work/, so that what its runs write stays out of the tree", async () => {
    const { cwd, configDir, searchDirs } = project();
    const tree = await collectTree(await loadAgent('lead', { searchDirs, env: {} }), {
      searchDirs,
      configDir,
      env: {},
      cwd,
    });
    const stored = await materializeTree(tree.manifest, blobReader(tree), tempDirForFile('axe-worker-'));
    const work = join(tempDirForFile('axe-batches-'), 'batch-1', 'work');
    expect(await copyWorkdir(stored, work)).toBe(work);
    const listed = (dir: string) => readdirSync(dir, { recursive: true }).map(String).sort();
    expect(listed(work)).toEqual(listed(stored.workdir));
    expect(readFileSync(join(work, 'docs', 'a.md'), 'utf8')).toBe('alpha');
    expect(statSync(join(work, 'docs')).mode & 0o777).toBe(0o700);
    expect(statSync(join(work, 'docs', 'a.md')).mode & 0o777).toBe(0o600);
    // A run writes in its batch's copy; the stored tree stays as it was queued.
    writeFileSync(join(work, 'docs', 'a.md'), 'changed by a tool');
    writeFileSync(join(work, 'docs', 'new.md'), 'written by a tool');
    expect(readFileSync(join(stored.workdir, 'docs', 'a.md'), 'utf8')).toBe('alpha');
    expect(readdirSync(join(stored.workdir, 'docs'))).toEqual(['a.md', 'b.md']);
    // The batch's next item (or another process of the same batch) finds its copy as it left it.
    await copyWorkdir(stored, work);
    expect(readFileSync(join(work, 'docs', 'a.md'), 'utf8')).toBe('changed by a tool');
  });

  it('two worker processes writing the same tree at once both end with the whole tree', async () => {
    const { cwd, configDir, searchDirs } = project();
    const tree = await collectTree(await loadAgent('lead', { searchDirs, env: {} }), {
      searchDirs,
      configDir,
      env: {},
      cwd,
    });
    const dir = tempDirForFile('axe-race-');
    const root = join(dir, 'trees');
    const blobs = Object.fromEntries([...tree.blobs].map(([sha, blob]) => [sha, blob.toString('base64')]));
    writeFileSync(join(dir, 'tree.json'), JSON.stringify({ manifest: tree.manifest, blobs }));
    // Each process waits, at its first blob, until every process has reached its first blob: all
    // have found no tree and are writing their own copy, so all but one lose the rename.
    const script = await childScript(
      `import { existsSync, readFileSync, writeFileSync } from 'node:fs';
       import { materializeTree } from './internal/queue/agent-tree.ts';
       const [dir, root, me, count] = process.argv.slice(2);
       const { manifest, blobs } = JSON.parse(readFileSync(dir + '/tree.json', 'utf8'));
       let waited = false;
       const readBlob = async (sha) => {
         if (!waited) {
           waited = true;
           writeFileSync(dir + '/ready-' + me, '');
           const until = Date.now() + 20_000;
           while (![...Array(Number(count)).keys()].every((n) => existsSync(dir + '/ready-' + n))) {
             if (Date.now() > until) throw new Error('the other processes never came');
             await new Promise((resolve) => setTimeout(resolve, 5));
           }
         }
         return Buffer.from(blobs[sha], 'base64');
       };
       const stored = await materializeTree(manifest, readBlob, root);
       process.stdout.write(JSON.stringify(stored));`,
      dir,
      'materialize.mjs',
    );
    const count = 3;
    const results = await Promise.all(
      Array.from(
        { length: count },
        (_, n) =>
          new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
            const child = spawn(process.execPath, [script, dir, root, String(n), String(count)]);
            let out = '';
            let err = '';
            child.stdout.on('data', (chunk) => (out += chunk));
            child.stderr.on('data', (chunk) => (err += chunk));
            child.on('close', (code) => resolve({ code, out, err }));
          }),
      ),
    );
    for (const result of results) expect(result).toMatchObject({ code: 0, err: '' });
    const stored = results.map((result) => JSON.parse(result.out));
    expect(new Set(stored.map((one) => one.dir))).toEqual(new Set([join(root, tree.manifest.digest)]));
    // Whole, and no losing copy left behind.
    expect(readdirSync(root)).toEqual([tree.manifest.digest]);
    for (const file of tree.manifest.files) {
      const content = readFileSync(join(root, tree.manifest.digest, file.path));
      expect(content.equals(tree.blobs.get(file.sha256) as Buffer)).toBe(true);
    }
  });
});

describe('a run of the stored tree', () => {
  it("reads the stored agents, skill and context files, its workdirs relative to the run's cwd", async () => {
    const llm = await startFakeLlm();
    try {
      const root = realpathSync(tempDirForFile('axe-tree-run-'));
      const cwd = join(root, 'project');
      const configDir = join(root, 'config');
      const agent = (name: string, body: string) =>
        `name = "${name}"\nmodel = "anthropic/claude-test"\nsystem_prompt = "agent:${name}"\n${body}\n`;
      write(cwd, {
        'axe/agents/lead.toml': agent(
          'lead',
          'skill = "writing"\nfiles = ["docs/*.md"]\nsub_agents = ["helper"]',
        ),
        'axe/agents/helper.toml': agent('helper', 'workdir = "sub"\nfiles = ["*.txt"]'),
        'docs/a.md': 'alpha',
        'sub/check.txt': 'check me',
      });
      write(configDir, { 'skills/writing/SKILL.md': 'Write well.' });
      const searchDirs = [join(cwd, 'axe', 'agents')];
      const lead = await loadAgent('lead', { searchDirs, env: {} });
      const tree = await collectTree(lead, { searchDirs, configDir, env: {}, cwd });
      rmSync(root, { recursive: true, force: true });

      const stored = await materializeTree(tree.manifest, blobReader(tree), tempDirForFile('axe-worker-'));
      // The worker's own config dir (its keys and providers) is not the tree's.
      const workerConfig = tempDirForFile('axe-worker-config-');
      llm.respond((request) =>
        agentOf(request) === 'lead' && request.toolResults.length === 0
          ? { toolCalls: callAgent('helper', 'check') }
          : { text: `${agentOf(request)} done` },
      );
      const env = { ANTHROPIC_API_KEY: 'test-key', AXE_ANTHROPIC_BASE_URL: llm.url };
      const outcome = await runTopLevel({
        spec: await loadAgentFile(stored.agentFile, env),
        input: 'go',
        env,
        searchDirs: stored.searchDirs,
        configDir: stored.configDir,
        cwd: await copyWorkdir(stored, join(tempDirForFile('axe-batch-'), 'work')),
        globalConfig: () => loadGlobalConfig(workerConfig),
        timeoutSeconds: 20,
        stream: false,
        signal: new AbortController().signal,
        emit: () => {},
      });
      expect(outcome.error).toBeUndefined();
      expect(outcome.result.content).toBe('lead done');
      const system = (name: string) => llm.requests.find((request) => agentOf(request) === name)?.system;
      expect(system('lead')).toBe(
        'agent:lead\n\n---\n\n## Skill\n\nWrite well.\n\n---\n\n## Context Files\n\n### docs/a.md\n```md\nalpha\n```',
      );
      expect(system('helper')).toBe(
        'agent:helper\n\n---\n\n## Context Files\n\n### check.txt\n```txt\ncheck me\n```',
      );
    } finally {
      await llm.close();
    }
  });
});
