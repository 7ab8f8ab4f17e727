import { join, resolve } from 'node:path';
import { resolvePaths } from '../internal/config/paths.js';
import { ConfigError, ExitCode, type StopSignal, signalExitCode } from '../internal/errors.js';
import { queueUrlFrom } from '../internal/queue/url.js';
import { startWorker } from '../internal/queue/worker.js';
import { maskSecrets } from '../internal/secrets.js';
import { countFlag, stringFlag } from './argv.js';
import { stderr } from './stdio.js';

const DEFAULT_CONCURRENCY = 8;
const DEFAULT_LEASE_SECONDS = 60;

/**
 * `axe worker --queue URL`: runs items of queued batches until Ctrl-C / SIGTERM (running items get
 * `--lease` seconds, the rest are handed back; a second one hands them back at once) or, with
 * `--exit-when-idle`, until there is nothing left to run. Returns the exit code.
 */
export async function workerCommand(options: Record<string, unknown>): Promise<number> {
  const argv = process.argv.slice(2);
  const env = process.env;
  const url = queueUrlFrom(stringFlag(argv, options.queue, '--queue'), env);
  if (url === undefined) {
    throw new ConfigError('--queue: name the PostgreSQL of the queue (postgres://…), or set AXE_QUEUE');
  }
  const concurrency = countFlag(argv, options.concurrency, '--concurrency') ?? DEFAULT_CONCURRENCY;
  const leaseSeconds = countFlag(argv, options.lease, '--lease') ?? DEFAULT_LEASE_SECONDS;
  const typedWorkdir = stringFlag(argv, options.workdir, '--workdir');
  const workdir =
    typedWorkdir !== undefined ? resolve(typedWorkdir) : join(resolvePaths(env).cacheDir, 'worker');
  const worker = await startWorker({
    url,
    concurrency,
    leaseSeconds,
    workdir,
    exitWhenIdle: options.exitWhenIdle === true,
    env,
    say: (line) => stderr.write(`${maskSecrets(line)}\n`),
  });
  let signal: StopSignal | undefined;
  const onSignal = (received: StopSignal) => {
    if (signal !== undefined) {
      stderr.write('axe worker: handing the running items back now\n');
      worker.abandon();
      return;
    }
    signal = received;
    stderr.write(
      `axe worker: ${received}: taking no new item; running items get ${leaseSeconds} s, then are handed back (${received === 'SIGINT' ? 'Ctrl-C' : received} again hands them back now)\n`,
    );
    worker.stop();
  };
  const signals: StopSignal[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  for (const name of signals) process.on(name, onSignal);
  try {
    await worker.done;
  } finally {
    for (const name of signals) process.off(name, onSignal);
  }
  return signal !== undefined ? signalExitCode(signal) : ExitCode.ok;
}
