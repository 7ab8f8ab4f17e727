import { onAbort } from '../abort.js';
import { type AgentSpec, DEFAULT_MAX_PARALLEL } from '../agent/spec.js';
import { ConfigError } from '../errors.js';

/**
 * A run-wide concurrency limit. Work beyond the limit waits in a first-in-first-out queue; it
 * never fails. Only leaf work (provider calls, tool executions) goes through it — never a
 * sub-agent as a whole — so a parent waiting on its children can never hold a slot they need.
 */
export interface Limiter {
  /** Runs `work` when a slot is free; a `signal` that fires while waiting leaves the queue. */
  run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** How much work may run at once. */
  readonly size: number;
  /** Work running now / waiting now. */
  active(): number;
  queued(): number;
}

export function createLimiter(max: number): Limiter {
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`limiter size must be >= 1, got ${max}`);
  let running = 0;
  const waiting: (() => void)[] = [];

  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };

  /** Resolves when a slot is handed over; rejects (and leaves the queue) when `signal` fires first. */
  const slot = (signal: AbortSignal | undefined): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      signal?.throwIfAborted();
      const leave = signal
        ? onAbort(signal, () => {
            waiting.splice(waiting.indexOf(granted), 1);
            reject(signal.reason);
          })
        : undefined;
      const granted = (): void => {
        leave?.();
        resolve();
      };
      waiting.push(granted);
    });

  /** Runs `work` in the slot just taken, and frees it once `work` settles; `work`'s own promise. */
  const inSlot = <T>(work: () => Promise<T>): Promise<T> => {
    let done: Promise<T>;
    try {
      done = work();
    } catch (error) {
      release();
      return Promise.reject(error);
    }
    done.then(release, release);
    return done;
  };

  return {
    // Not an async function: a fan-out's every model call waits in here, and an async frame held
    // for each of them is memory the garbage collector copies.
    run<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
      if (running < max) {
        running++;
        return inSlot(work);
      }
      return slot(signal).then(() => inSlot(work));
    },
    size: max,
    active: () => running,
    queued: () => waiting.length,
  };
}

/** `max_parallel` of the top-level agent's file, else env AXE_MAX_PARALLEL, else 64. */
export function effectiveMaxParallel(spec: AgentSpec, env: NodeJS.ProcessEnv): number {
  if (spec.subAgentsConfig.maxParallel !== undefined) return spec.subAgentsConfig.maxParallel;
  const raw = env.AXE_MAX_PARALLEL;
  if (raw === undefined || raw.trim() === '') return DEFAULT_MAX_PARALLEL;
  const value = Number(raw.trim());
  if (!Number.isInteger(value) || value < 1) {
    throw new ConfigError(`AXE_MAX_PARALLEL: expected a positive integer, got "${raw}"`);
  }
  return value;
}
