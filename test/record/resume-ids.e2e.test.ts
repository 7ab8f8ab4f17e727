import { describe, expect, it } from 'vitest';
import type { RecordedRequest, ScriptedReply } from '../fake-llm/types.js';
import { agentToml, callAgent, roleOf } from '../run/agents.js';
import { e2eHomes, runAxe, startAxe } from '../run/cli.js';

/**
 * A run picked up (`--resume`, `--continue`) numbers its sub-agents after the ones the run it
 * follows numbered: no agent_id its conversation already holds is given to another call, so
 * call_agent's `resume` continues the sub-agent it names.
 */
const setup = e2eHomes();

function bodyMessages(request: RecordedRequest | undefined): { role: string; content: unknown }[] {
  return (request?.body as { messages?: { role: string; content: unknown }[] } | undefined)?.messages ?? [];
}

const text = (content: unknown): string =>
  typeof content === 'string'
    ? content
    : (content as { type: string; text?: string }[])
        .filter((b) => b.type === 'text')
        .map((b) => b.text)
        .join('');

/** A helper's request as `role:text` lines. */
const told = (request: RecordedRequest | undefined) =>
  bodyMessages(request).map((m) => `${m.role}:${text(m.content)}`);

const resumeCall = (task: string, id: string) => ({
  name: 'call_agent',
  arguments: { agent: 'helper', task, resume: id },
});

const agentId = (content: string | undefined): string =>
  (JSON.parse(content ?? '{}') as { agent_id?: string }).agent_id ?? '';

describe.concurrent('agent_ids of a run picked up', () => {
  it('--resume numbers new calls after the picked-up run’s; resume continues the sub-agent named, a completed child is still reused', async () => {
    const { home, fake } = await setup();
    home.agent('helper', agentToml('helper'));
    home.agent(
      'lead',
      agentToml('lead', {
        subAgents: ['helper'],
        subAgentsConfig: ['result_format = "json"', 'resume = true'],
      }),
    );
    let hanging = true;
    fake.respond((r): ScriptedReply => {
      if (roleOf(r) === 'helper') {
        return r.lastUserText === 'Task: beta' && hanging
          ? { fault: { kind: 'hang' } }
          : { text: `helper heard ${r.lastUserText}` };
      }
      const results = r.toolResults.map((t) => t.content);
      if (r.lastUserText === 'more') {
        // --continue: a new call, and a resume of a sub-agent of the run continued.
        if (results.length === 5) {
          return {
            toolCalls: [
              callAgent('helper', 'zeta'),
              resumeCall('eta', agentId(results[4])),
              // alpha ran in the run before the one continued: not this run's to resume.
              resumeCall('theta', agentId(results[0])),
            ],
          };
        }
        return { text: `more: ${results.slice(5).join(' | ')}` };
      }
      switch (results.length) {
        case 0:
          return { toolCalls: [callAgent('helper', 'alpha')] };
        case 1:
          return { toolCalls: [callAgent('helper', 'beta'), callAgent('helper', 'delta')] };
        case 3:
          // gamma continues alpha (picked-up run), epsilon delta (reused in this run).
          return {
            toolCalls: [resumeCall('gamma', agentId(results[0])), resumeCall('epsilon', agentId(results[2]))],
          };
        default:
          return { text: `lead: ${results.join(' | ')}` };
      }
    });
    const env = home.env(fake.url);
    const first = startAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--timeout', '3'], {
      env,
    });
    const ended = await first.done;
    expect(ended.code, ended.stderr).toBe(3);
    const helpers = () => fake.requests.filter((r) => roleOf(r) === 'helper');
    expect(helpers().map((r) => r.lastUserText)).toEqual(['Task: alpha', 'Task: beta', 'Task: delta']);
    hanging = false;
    const before = helpers().length;
    const resumed = await runAxe(['run', '--resume', 'last'], { env });
    expect(resumed.code, resumed.stderr).toBe(0);
    // delta had completed: reused, not asked again; beta runs again.
    expect(
      helpers()
        .slice(before)
        .map((r) => r.lastUserText),
    ).toEqual(['Task: beta', 'Task: gamma', 'Task: epsilon']);
    const leads = fake.requests.filter((r) => roleOf(r) === 'lead');
    const results = leads.at(-1)?.toolResults.map((t) => t.content) ?? [];
    expect(results).toHaveLength(5);
    const ids = results.map(agentId);
    // alpha (first run), then beta and delta numbered after the first run's #1–#3, gamma, epsilon.
    expect(ids).toEqual([
      'lead/call_agent#1:helper',
      'lead/call_agent#4:helper',
      'lead/call_agent#5:helper',
      'lead/call_agent#6:helper',
      'lead/call_agent#7:helper',
    ]);
    expect(JSON.parse(results[2] ?? '')).toMatchObject({
      status: 'completed',
      result: 'helper heard Task: delta',
    });
    const [gamma, epsilon] = helpers().slice(-2);
    expect(told(gamma)).toEqual([
      'user:Task: alpha',
      'assistant:helper heard Task: alpha',
      'user:Task: gamma',
    ]);
    expect(told(epsilon)).toEqual([
      'user:Task: delta',
      'assistant:helper heard Task: delta',
      'user:Task: epsilon',
    ]);
    expect(resumed.stdout).toContain('"result":"helper heard Task: gamma"');

    // --continue: its conversation holds #1–#7; the next call is #8, and a resume reaches epsilon.
    const continued = await runAxe(
      ['run', 'lead', '--agents-dir', home.agentsDir, '--continue', '-p', 'more'],
      {
        env,
      },
    );
    expect(continued.code, continued.stderr).toBe(0);
    const more = fake.requests.filter((r) => roleOf(r) === 'lead').at(-1)?.toolResults ?? [];
    expect(more.slice(5, 7).map((t) => agentId(t.content))).toEqual([
      'lead/call_agent#8:helper',
      'lead/call_agent#9:helper',
    ]);
    expect(more[7]).toMatchObject({
      isError: true,
      content:
        'call_agent error: no finished sub-agent with agent_id "lead/call_agent#1:helper" to resume in this run',
    });
    expect(told(helpers().at(-1))).toEqual([
      'user:Task: delta',
      'assistant:helper heard Task: delta',
      'user:Task: epsilon',
      'assistant:helper heard Task: epsilon',
      'user:Task: eta',
    ]);
  });
});
