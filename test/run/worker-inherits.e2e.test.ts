import { describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fake-llm/types.js';
import { agentToml, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';

/**
 * A worker (`spawn_agents`, an unnamed `delegate_task` sub-task) is its caller as it runs: the
 * tools its caller was narrowed to and the `--skill` it was given stay with it.
 */
const setup = e2eHomes();

const isWorker = (request: RecordedRequest) => /^(job|Task: sub) /.test(request.lastUserText);

describe('workers keep what their caller runs with', () => {
  it("a helper narrowed by its caller's `tools` cannot give its workers more", async () => {
    const { home, fake } = await setup();
    home.agent('lead', agentToml('lead', { subAgents: ['helper'], subAgentsConfig: ['overrides = true'] }));
    home.agent(
      'helper',
      agentToml('helper', {
        extra: ['tools = ["list_directory", "run_command"]'],
        subAgentsConfig: ['spawn = true', 'delegate = true'],
      }),
    );
    fake.respond((request) => {
      if (isWorker(request)) return { text: `did ${request.lastUserText}` };
      const done = request.toolResults.length > 0;
      if (roleOf(request) === 'lead') {
        return done
          ? { text: 'lead done' }
          : {
              toolCalls: [
                {
                  name: 'call_agent',
                  arguments: {
                    agent: 'helper',
                    task: 'look around',
                    tools: ['list_directory', 'spawn_agents', 'delegate_task'],
                  },
                },
              ],
            };
      }
      return done
        ? { text: 'helper done' }
        : {
            toolCalls: [
              { name: 'spawn_agents', arguments: { tasks: [{ task: 'job 1' }] } },
              { name: 'delegate_task', arguments: { plan: 'look', subtasks: [{ task: 'sub 1' }] } },
            ],
          };
    });
    const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go'], {
      env: home.env(fake.url),
    });
    expect(result.code).toBe(0);
    const helper = fake.requests.find((r) => roleOf(r) === 'helper' && !isWorker(r));
    expect(helper?.toolNames).toEqual(['list_directory', 'spawn_agents', 'delegate_task']);
    const workers = fake.requests.filter(isWorker);
    expect(workers.map((w) => w.lastUserText.split('\n')[0]).sort()).toEqual(['Task: sub 1', 'job 1']);
    for (const worker of workers)
      expect(worker.toolNames).toEqual(['list_directory', 'submit_result', 'submit_error']);
  });

  it('a worker of the top-level agent gets the --skill it was run with', async () => {
    const { home, fake } = await setup();
    const skill = home.file('skills/review/SKILL.md', 'SKILL-MARKER: review carefully\n');
    home.agent('lead', agentToml('lead', { subAgentsConfig: ['spawn = true'] }));
    fake.respond((request) =>
      isWorker(request)
        ? { text: 'did it' }
        : request.toolResults.length === 0
          ? { toolCalls: [{ name: 'spawn_agents', arguments: { tasks: [{ task: 'job 1' }] } }] }
          : { text: 'lead done' },
    );
    const result = await runAxe(
      ['run', 'lead', '--agents-dir', home.agentsDir, '--skill', skill, '-p', 'go'],
      { env: home.env(fake.url) },
    );
    expect(result.code).toBe(0);
    const [lead] = fake.requests.filter((r) => !isWorker(r));
    const [worker] = fake.requests.filter(isWorker);
    expect(lead?.system).toContain('SKILL-MARKER');
    expect(worker?.system).toBe(lead?.system);
  });
});
