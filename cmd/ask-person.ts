import { createInterface } from 'node:readline';
import { untilAborted } from '../internal/abort.js';
import { stderr } from './stdio.js';

/** What a question gets once the person has ended the input: the asking sub-agent goes on. */
const NO_ANSWER = 'the person at the terminal will not answer (input ended): go on with what you know';

/**
 * `--interactive`: a sub-agent's `ask_parent` that reaches the top-level agent is put to the person
 * at the terminal (the question on stderr, the answer from stdin), one question at a time; the
 * asking sub-agent waits, its siblings go on. A question waiting for its turn leaves the line when
 * its asker's signal fires (its deadline, its cancellation). Ctrl-C while a question waits stops
 * the run as anywhere else. Ctrl-D (the end of stdin) says "I won't answer": that question and
 * every later one fail at once with a one-line reason, the asking sub-agents go on without an
 * answer, and nobody is asked again.
 */
export function terminalAsker(): (agent: string, question: string, signal: AbortSignal) => Promise<string> {
  const input = { ended: false };
  // Settles when every question asked so far has been answered or has left the line.
  let line: Promise<void> = Promise.resolve();
  return async (agent, question, signal) => {
    const ahead = line;
    let done!: () => void;
    const mine = new Promise<void>((resolve) => {
      done = resolve;
    });
    // The next question waits for those ahead of this one and for this one, however it ends.
    line = ahead.then(() => mine);
    try {
      await untilAborted(ahead, signal);
      return await askOnce(agent, question, signal, input);
    } finally {
      done();
    }
  };
}

function askOnce(
  agent: string,
  question: string,
  signal: AbortSignal,
  input: { ended: boolean },
): Promise<string> {
  signal.throwIfAborted();
  const stdin = process.stdin;
  if (input.ended || stdin.readableEnded || stdin.destroyed) {
    input.ended = true;
    return Promise.reject(new Error(NO_ANSWER));
  }
  const terminal = createInterface({ input: stdin, output: stderr.stream(), terminal: true });
  // The terminal is in raw mode while it reads: Ctrl-C reaches readline, not the process.
  terminal.on('SIGINT', () => process.kill(process.pid, 'SIGINT'));
  let settled = false;
  return new Promise<string>((resolve, reject) => {
    const onAbort = () => {
      settled = true;
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    // Ctrl-D on an empty line, or the end of stdin, closes the interface before an answer.
    terminal.once('close', () => {
      signal.removeEventListener('abort', onAbort);
      if (settled) return;
      settled = true;
      input.ended = true;
      stderr.write('\n');
      reject(new Error(NO_ANSWER));
    });
    terminal.question(`\nsub-agent "${agent}" asks: ${question}\n> `, (answer) => {
      signal.removeEventListener('abort', onAbort);
      settled = true;
      resolve(answer.trim());
    });
  }).finally(() => terminal.close());
}
