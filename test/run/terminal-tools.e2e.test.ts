import { existsSync } from 'node:fs';
import path from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import eventSchema from '../../schemas/run-event.schema.json' with { type: 'json' };
import type { RecordedRequest } from '../fake-llm/types.js';
import { agentToml } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/**
 * Terminal tools: every `spawn_agents` worker is offered `submit_result` / `submit_error` (free
 * text), and a submission ends the agent at once: the calls after it in its turn are not run, and
 * are reported skipped.
 */
const setup = e2eHomes();

const isWorker = (request: RecordedRequest) => request.lastUserText.startsWith('job ');

/** The `tool.end` events of a run's `--events -` on stderr. */
function toolEnds(stderr: string): { name: string; output: string; skipped?: boolean; path: string }[] {
  return stderr
    .split('\n')
    .filter((line) => line.includes('"type":"tool.end"'))
    .map((line) => JSON.parse(line));
}

describe.concurrent('terminal tools', () => {
  it('a spawn_agents worker submits free text; its write_file after the submission never runs', async () => {
    const { home, fake } = await setup();
    const workdir = path.dirname(home.file('work/keep.txt', 'kept'));
    home.agent(
      'lead',
      agentToml('lead', {
        extra: [`workdir = "${workdir}"`, 'tools = ["read_file", "write_file"]'],
        subAgentsConfig: ['spawn = true'],
      }),
    );
    fake.respond((request) => {
      if (isWorker(request))
        return {
          toolCalls: [
            { name: 'submit_result', arguments: { result: 'found it' } },
            { name: 'write_file', arguments: { path: 'late.txt', content: 'too late' } },
          ],
        };
      return request.toolResults.length === 0
        ? { toolCalls: [{ name: 'spawn_agents', arguments: { tasks: [{ task: 'job one' }] } }] }
        : { text: 'lead done' };
    });
    const result = await runAxe(
      ['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--events', '-'],
      { env: home.env(fake.url) },
    );
    expect(result).toMatchObject({ code: 0, stdout: 'lead done' });
    const workers = fake.requests.filter(isWorker);
    // One request: the submission ended the worker.
    expect(workers).toHaveLength(1);
    expect(workers[0]?.toolNames).toEqual(['read_file', 'write_file', 'submit_result', 'submit_error']);
    expect(existsSync(path.join(workdir, 'late.txt'))).toBe(false);
    const lead = fake.requests.filter((r) => !isWorker(r));
    expect(JSON.parse(lead.at(-1)?.toolResults[0]?.content ?? '{}')).toEqual({
      sub_agent_results: [
        {
          status: 'completed',
          agent_id: 'lead/spawn_agents#1.1:lead',
          task: 'job one',
          outcome: { success: { result: 'found it' } },
        },
      ],
    });
    const ends = toolEnds(result.stderr);
    const skipped = ends.find((event) => event.name === 'write_file');
    expect(skipped).toMatchObject({
      skipped: true,
      output: 'skipped: not run, an earlier call of this turn ended the agent',
      path: 'lead/spawn_agents#1.1:lead',
    });
    const validate = new Ajv2020({ strict: false }).compile(eventSchema);
    expect(validate(skipped), JSON.stringify(validate.errors)).toBe(true);
  });

  it('an [output] agent: a write_file after submit_result is skipped; one before it runs', async () => {
    const { home, fake } = await setup();
    const workdir = path.dirname(home.file('work/keep.txt', 'kept'));
    home.agent(
      'writer',
      agentToml('writer', {
        extra: [`workdir = "${workdir}"`, 'tools = ["write_file"]', '', '[output]'],
      }),
    );
    fake.respond(() => ({
      toolCalls: [
        { name: 'write_file', arguments: { path: 'early.txt', content: 'in time' } },
        { name: 'submit_result', arguments: { result: 'done' } },
        { name: 'write_file', arguments: { path: 'late.txt', content: 'too late' } },
      ],
    }));
    const result = await runAxe(['run', 'writer', '--agents-dir', home.agentsDir, '-p', 'go', '--json'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(0);
    expect(existsSync(path.join(workdir, 'early.txt'))).toBe(true);
    expect(existsSync(path.join(workdir, 'late.txt'))).toBe(false);
    const envelope = JSON.parse(result.stdout) as { output: unknown; tool_calls: number };
    expect(envelope.output).toBe('done');
    expect(fake.requests).toHaveLength(1);
  });

  it('a refused submission lets the later calls of its turn run', async () => {
    const { home, fake } = await setup();
    const workdir = path.dirname(home.file('work/keep.txt', 'kept'));
    home.agent(
      'writer',
      agentToml('writer', {
        extra: [`workdir = "${workdir}"`, 'tools = ["write_file"]', '', '[output]'],
      }),
    );
    fake.respond((request) =>
      request.toolResults.length === 0
        ? {
            toolCalls: [
              { name: 'submit_result', arguments: { result: 42 } },
              { name: 'write_file', arguments: { path: 'after.txt', content: 'runs' } },
            ],
          }
        : { toolCalls: [{ name: 'submit_result', arguments: { result: 'fixed' } }] },
    );
    const result = await runAxe(['run', 'writer', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
    });
    expect(result).toMatchObject({ code: 0, stdout: '"fixed"\n' });
    expect(existsSync(path.join(workdir, 'after.txt'))).toBe(true);
  });
});
