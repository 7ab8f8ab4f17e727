import { createInterface } from 'node:readline';
import { stderr } from './stdio.js';

/**
 * `--interactive`: a sub-agent's `ask_parent` that reaches the top-level agent is put to the person
 * at the terminal (the question on stderr, the answer from stdin), one question at a time; the
 * asking sub-agent waits, its siblings go on. Ctrl-C while a question waits stops the run as
 * anywhere else.
 */
export function terminalAsker(): (agent: string, question: string, signal: AbortSignal) => Promise<string> {
  let queue: Promise<unknown> = Promise.resolve();
  return (agent, question, signal) => {
    const turn = queue.then(() => askOnce(agent, question, signal));
    queue = turn.catch(() => undefined);
    return turn;
  };
}

function askOnce(agent: string, question: string, signal: AbortSignal): Promise<string> {
  signal.throwIfAborted();
  const terminal = createInterface({ input: process.stdin, output: stderr.stream(), terminal: true });
  // The terminal is in raw mode while it reads: Ctrl-C reaches readline, not the process.
  terminal.on('SIGINT', () => process.kill(process.pid, 'SIGINT'));
  return new Promise<string>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    terminal.question(`\nsub-agent "${agent}" asks: ${question}\n> `, (answer) => {
      signal.removeEventListener('abort', onAbort);
      resolve(answer.trim());
    });
  }).finally(() => terminal.close());
}
