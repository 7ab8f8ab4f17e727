import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import eventSchema from '../../schemas/run-event.schema.json' with { type: 'json' };
import type { RecordedRequest, ScriptedReply } from '../fake-llm/types.js';
import { agentToml, callAgent, roleOf } from './agents.js';
import { e2eHomes, runAxe } from './cli.js';
import { interactiveRun } from './interactive-terminal.js';

/** `ask_parent`: a sub-agent's question answered by a side request to its caller's model. */
const setup = e2eHomes();

const isSide = (r: RecordedRequest) => r.lastUserText.includes('Your sub-agent "asker" asks:');

async function seed(asker: (r: RecordedRequest) => ScriptedReply, config = ['ask_parent = true']) {
  const { home, fake } = await setup();
  home.agent('asker', agentToml('asker'));
  home.agent('lead', agentToml('lead', { subAgents: ['asker'], subAgentsConfig: config }));
  fake.respond((request) => {
    if (isSide(request)) return { text: 'Use b.txt.' };
    if (roleOf(request) === 'asker') return asker(request);
    return request.toolResults.length === 0
      ? { text: 'The notes are in b.txt.', toolCalls: [callAgent('asker', 'summarise the notes')] }
      : { text: 'lead done' };
  });
  const result = await runAxe(['run', 'lead', '--agents-dir', home.agentsDir, '-p', 'go', '--events', '-'], {
    env: home.env(fake.url),
  });
  return { result, fake };
}

describe.concurrent('ask_parent', () => {
  it("the side request carries the caller's conversation and the question; the child gets the answer", async () => {
    const { result, fake } = await seed((r) =>
      r.toolResults.length === 0
        ? { toolCalls: [{ name: 'ask_parent', arguments: { question: 'Which file?' } }] }
        : { text: `child read: ${r.toolResults[0]?.content}` },
    );
    expect(result).toMatchObject({ code: 0, stdout: 'lead done' });
    const asker = fake.requests.filter((r) => roleOf(r) === 'asker' && !isSide(r));
    expect(asker[0]?.toolNames).toEqual(['ask_parent']);
    expect(asker[1]?.toolResults[0]).toMatchObject({ content: 'Use b.txt.', isError: false });
    const side = fake.requests.filter(isSide);
    expect(side).toHaveLength(1);
    expect(roleOf(side[0] ?? { system: '' })).toBe('lead');
    expect(side[0]?.toolNames).toEqual([]);
    expect(side[0]?.rejection).toBeUndefined();
    expect(side[0]?.lastUserText).toBe(
      'Your sub-agent "asker" asks: Which file?. Answer briefly from what you know; you cannot use tools now.',
    );
    // The caller's turn that made the call, cut back to its text.
    expect(JSON.stringify(side[0]?.body)).toContain('The notes are in b.txt.');
    const lead = fake.requests.filter((r) => roleOf(r) === 'lead' && !isSide(r));
    expect(lead.at(-1)?.toolResults[0]?.content).toBe('child read: Use b.txt.');
    // The event stream tells the question and its answer, on the agent that answered.
    const questions = result.stderr
      .split('\n')
      .filter((line) => line.includes('"type":"question"'))
      .map((line) => JSON.parse(line));
    const validate = new Ajv2020({ strict: false }).compile(eventSchema);
    for (const question of questions) expect(validate(question), JSON.stringify(validate.errors)).toBe(true);
    expect(questions).toEqual([
      expect.objectContaining({ path: 'lead', from: 'asker', question: 'Which file?', answer: 'Use b.txt.' }),
    ]);
  });

  it('at most max_questions per call; without ask_parent = true there is no such tool', async () => {
    const { fake } = await seed(
      (r) =>
        r.toolResults.length < 4
          ? { toolCalls: [{ name: 'ask_parent', arguments: { question: `q${r.toolResults.length}` } }] }
          : { text: 'done asking' },
      ['ask_parent = true', 'max_questions = 2'],
    );
    expect(fake.requests.filter(isSide)).toHaveLength(2);
    const last = fake.requests.filter((r) => roleOf(r) === 'asker' && !isSide(r)).at(-1);
    expect(last?.toolResults.map((t) => t.isError)).toEqual([false, false, true, true]);
    expect(last?.toolResults[2]?.content).toBe(
      'ask_parent error: you have asked 2 questions, the most allowed: go on with what you know',
    );

    const off = await seed(() => ({ text: 'no questions' }), ['parallel = true']);
    expect(off.fake.requests.find((r) => roleOf(r) === 'asker')?.toolNames).toEqual([]);
  });

  it("--interactive at a terminal: the person answers the top-level agent's questions", async () => {
    const { home, fake } = await setup();
    home.agent('asker', agentToml('asker'));
    home.agent('lead', agentToml('lead', { subAgents: ['asker'], subAgentsConfig: ['ask_parent = true'] }));
    fake.respond((request) => {
      if (roleOf(request) === 'asker') {
        return request.toolResults.length === 0
          ? { toolCalls: [{ name: 'ask_parent', arguments: { question: 'Which file?' } }] }
          : { text: `child read: ${request.toolResults[0]?.content}` };
      }
      return request.toolResults.length === 0
        ? { toolCalls: [callAgent('asker', 'summarise')] }
        : { text: `lead done: ${request.toolResults[0]?.content}` };
    });
    // `script` gives axe a pseudo-terminal; the test types the answer once the question shows.
    // Typed once: the echo can reach the screen after the screen is looked at again.
    let typed = false;
    const terminal = interactiveRun(home, fake.url, [], (screen, t) => {
      if (!typed && screen.includes('sub-agent "asker" asks: Which file?\r\n> ')) {
        typed = true;
        t.type('b.txt\r');
      }
    });
    const code = await terminal.done;
    expect(code).toBe(0);
    expect(terminal.screen()).toContain('lead done: child read: b.txt');
    expect(fake.requests.filter(isSide)).toHaveLength(0);
  });
});
