import { spawn } from 'node:child_process';
import { AXE_BIN, type TempHome } from './cli.js';

/** A pseudo-terminal (`script`) running axe, as a person at a terminal would. */
export interface Terminal {
  /** Resolves with the exit code of `script` (axe's) when the terminal closes. */
  done: Promise<number | null>;
  /** Everything the terminal showed so far (stdout and stderr, as the pty merges them). */
  screen(): string;
  /** Types `text` at the terminal. */
  type(text: string): void;
}

/** `axe run lead --interactive …` on a pseudo-terminal; `onScreen` sees the screen as it grows. */
export function interactiveRun(
  home: TempHome,
  url: string,
  args: string[],
  onScreen: (screen: string, terminal: Terminal) => void = () => {},
  redirect = '',
): Terminal {
  const quoted = args.map((arg) => `"${arg}"`).join(' ');
  const command = `"${process.execPath}" "${AXE_BIN}" run lead --agents-dir "${home.agentsDir}" -p go --interactive ${quoted}${redirect}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], { env: home.env(url) });
  let screen = '';
  const terminal: Terminal = {
    done: new Promise((resolve) => child.on('close', resolve)),
    screen: () => screen,
    type: (text) => child.stdin.write(text),
  };
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    screen += chunk;
    onScreen(screen, terminal);
  });
  return terminal;
}
