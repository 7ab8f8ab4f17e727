import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../fake-llm/types.js';
import { agentToml, callAgent, roleOf } from './agents.js';
import { e2eHomes, waitFor } from './cli.js';
import { interactiveRun } from './interactive-terminal.js';

/**
 * `--interactive` at a terminal (a pseudo-terminal from `script`): the person who will not answer
 * (Ctrl-D) and a question that waits behind another one while its asker's deadline passes.
 */
const setup = e2eHomes();

const isSide = (r: RecordedRequest) => r.lastUserText.includes('asks:');

const prompt = (agent: string, question: string) => `sub-agent "${agent}" asks: ${question}\r\n> `;

describe.concurrent('--interactive: Ctrl-D and waiting questions', () => {
  it("Ctrl-D at the prompt: the question gets an error result, the agent goes on, later questions don't reach the person", async () => {
    const { home, fake } = await setup();
    home.agent('asker', agentToml('asker'));
    home.agent('lead', agentToml('lead', { subAgents: ['asker'], subAgentsConfig: ['ask_parent = true'] }));
    fake.respond((request) => {
      if (roleOf(request) === 'asker') {
        const asked = request.toolResults.length;
        if (asked < 2) {
          const question = asked === 0 ? 'Which file?' : 'Which line?';
          return { toolCalls: [{ name: 'ask_parent', arguments: { question } }] };
        }
        return { text: 'child went on' };
      }
      return request.toolResults.length === 0
        ? { toolCalls: [callAgent('asker', 'summarise')] }
        : { text: `lead done: ${request.toolResults[0]?.content}` };
    });
    let typed = false;
    const terminal = interactiveRun(home, fake.url, ['--timeout', '20'], (screen, t) => {
      if (!typed && screen.includes(prompt('asker', 'Which file?'))) {
        typed = true;
        t.type('\x04');
      }
    });
    const code = await terminal.done;
    const screen = terminal.screen();
    // Not at the run's deadline, which would end it with exit 3.
    expect(code, screen).toBe(0);
    expect(screen).toContain('lead done: child went on');
    expect(screen).not.toContain('timeout');
    // The person was asked once: the second question took the same path at once.
    expect(screen.split('asks:')).toHaveLength(2);
    expect(screen).not.toContain('Which line?');
    const last = fake.requests.filter((r) => roleOf(r) === 'asker').at(-1);
    expect(last?.toolResults).toHaveLength(2);
    for (const result of last?.toolResults ?? []) {
      expect(result.isError).toBe(true);
      expect(result.content).toBe(
        'tool "ask_parent" failed: the person at the terminal will not answer (input ended): go on with what you know',
      );
    }
    // Not answered by the model either: the person said they would not answer.
    expect(fake.requests.filter(isSide)).toHaveLength(0);
  });

  it('Ctrl-D while questions wait behind the one asked: none of them reaches the person, none hangs', async () => {
    const { home, fake } = await setup();
    home.agent('asker', agentToml('asker'));
    home.agent(
      'lead',
      agentToml('lead', { subAgents: ['asker'], subAgentsConfig: ['ask_parent = true', 'parallel = true'] }),
    );
    fake.respond((request) => {
      if (roleOf(request) === 'asker') {
        const which = request.lastUserText.includes('first') ? 'first' : 'second';
        return request.toolResults.length === 0
          ? {
              toolCalls: [{ name: 'ask_parent', arguments: { question: `Q-${which}` } }],
              delayMs: which === 'first' ? 0 : 300,
            }
          : { text: `${which}: ${request.toolResults[0]?.isError ? 'error' : 'answered'}` };
      }
      return request.toolResults.length === 0
        ? { toolCalls: [callAgent('asker', 'first'), callAgent('asker', 'second')] }
        : { text: `lead done: ${request.toolResults.map((r) => r.content).join(' | ')}` };
    });
    let typed = false;
    const terminal = interactiveRun(home, fake.url, ['--timeout', '20'], (screen, t) => {
      if (typed || !screen.includes(prompt('asker', 'Q-first'))) return;
      typed = true;
      // Ctrl-D once the second question is waiting behind the first: its request may come after
      // the prompt's last output, so it is waited for apart from the screen.
      const secondAsked = () =>
        fake.requests.some((r) => roleOf(r) === 'asker' && r.lastUserText.includes('second'));
      const poll = setInterval(() => {
        if (!secondAsked()) return;
        clearInterval(poll);
        setTimeout(() => t.type('\x04'), 800);
      }, 20);
    });
    const code = await terminal.done;
    const screen = terminal.screen();
    expect(code, screen).toBe(0);
    expect(screen).toContain('lead done: first: error | second: error');
    expect(screen).not.toContain('Q-second');
  });

  it('stdin not a terminal: the flag says so once and the model answers; nothing waits', async () => {
    const { home, fake } = await setup();
    home.agent('asker', agentToml('asker'));
    home.agent('lead', agentToml('lead', { subAgents: ['asker'], subAgentsConfig: ['ask_parent = true'] }));
    fake.respond((request) => {
      if (isSide(request)) return { text: 'Use b.txt.' };
      if (roleOf(request) === 'asker') {
        return request.toolResults.length === 0
          ? { toolCalls: [{ name: 'ask_parent', arguments: { question: 'Which file?' } }] }
          : { text: `child read: ${request.toolResults[0]?.content}` };
      }
      return request.toolResults.length === 0
        ? { toolCalls: [callAgent('asker', 'summarise')] }
        : { text: `lead done: ${request.toolResults[0]?.content}` };
    });
    const terminal = interactiveRun(home, fake.url, ['--timeout', '20'], () => {}, ' < /dev/null');
    const code = await terminal.done;
    const screen = terminal.screen();
    expect(code, screen).toBe(0);
    expect(screen).toContain('lead done: child read: Use b.txt.');
    expect(screen.split('--interactive needs a terminal on stdin and stderr')).toHaveLength(2);
    expect(screen).not.toContain('asks:');
    expect(fake.requests.filter(isSide)).toHaveLength(1);
  });

  it("a question waiting behind another one leaves the queue at its asker's deadline; the next one still waits its turn", async () => {
    const { home, fake } = await setup();
    home.agent('slow', agentToml('slow'));
    home.agent('quick', agentToml('quick', { extra: ['[budget]', 'timeout = 2'] }));
    home.agent('third', agentToml('third'));
    home.agent(
      'lead',
      agentToml('lead', {
        subAgents: ['slow', 'quick', 'third'],
        subAgentsConfig: ['ask_parent = true', 'parallel = true'],
      }),
    );
    // `slow` asks at once, `quick` and `third` a little later: their questions wait behind its.
    const delay: Record<string, number> = { slow: 0, quick: 300, third: 600 };
    fake.respond((request) => {
      const role = roleOf(request);
      if (role === 'lead') {
        return request.toolResults.length === 0
          ? { toolCalls: [callAgent('slow', 'a'), callAgent('quick', 'b'), callAgent('third', 'c')] }
          : { text: 'lead done' };
      }
      return request.toolResults.length === 0
        ? {
            toolCalls: [{ name: 'ask_parent', arguments: { question: `Q-${role}` } }],
            delayMs: delay[role] ?? 0,
          }
        : { text: `${role} read: ${request.toolResults[0]?.content}` };
    });
    const events = path.join(home.root, 'events.jsonl');
    const quickEnded = () =>
      existsSync(events) &&
      /"type":"agent.end"[^\n]*"agent":"quick"|"agent":"quick"[^\n]*"type":"agent.end"/.test(
        readFileSync(events, 'utf8'),
      );
    let answeredSlowAt = 0;
    let answeredThird = false;
    const terminal = interactiveRun(home, fake.url, ['--timeout', '30', '--events', events], (screen, t) => {
      if (!answeredSlowAt && screen.includes(prompt('slow', 'Q-slow'))) {
        answeredSlowAt = -1;
        // The person answers only once `quick` (2 s to live) has ended: were its question to leave
        // the queue only when the one ahead is answered, nothing would move until --timeout.
        void waitFor(() => quickEnded(), 25_000).then(() => {
          answeredSlowAt = Date.now();
          t.type('slow-answer\r');
        });
      }
      if (!answeredThird && screen.includes(prompt('third', 'Q-third'))) {
        answeredThird = true;
        t.type('third-answer\r');
      }
    });
    const code = await terminal.done;
    const screen = terminal.screen();
    expect(code, screen).toBe(0);
    expect(screen).toContain('lead done');
    expect(screen).not.toContain('Q-quick');
    const ends = readFileSync(events, 'utf8')
      .split('\n')
      .filter((line) => line.includes('"type":"agent.end"'))
      .map((line) => JSON.parse(line) as { agent: string; status: string; time: number; durationMs: number });
    const quick = ends.find((e) => e.agent === 'quick');
    expect(quick?.status).toBe('timeout');
    // It ended at its own deadline, before the question ahead of it was answered (the answer is
    // typed once its end is in the events: both can fall in the same millisecond).
    expect(quick?.time).toBeLessThanOrEqual(answeredSlowAt);
    // The next question was not let through early: it was put once the one ahead was answered.
    const thirdPromptAt = screen.indexOf(prompt('third', 'Q-third'));
    expect(thirdPromptAt).toBeGreaterThan(screen.indexOf('slow-answer'));
    expect(screen.indexOf('slow-answer')).toBeGreaterThan(-1);
    const lead = fake.requests.filter((r) => roleOf(r) === 'lead').at(-1);
    const results = lead?.toolResults.map((r) => r.content) ?? [];
    expect(results[0]).toBe('slow read: slow-answer');
    expect(results[2]).toBe('third read: third-answer');
    expect(ends.find((e) => e.agent === 'slow')?.status).toBe('completed');
    expect(ends.find((e) => e.agent === 'third')?.status).toBe('completed');
  });
});
