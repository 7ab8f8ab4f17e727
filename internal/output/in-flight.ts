import type { StopSignal } from '../errors.js';
import type { RunEvent } from '../runner/events.js';

/** Which sub-agents of the tree are running right now, by path, in start order (for Ctrl-C reports). */
export class InFlightAgents {
  private readonly running = new Set<string>();

  observe(event: RunEvent): void {
    if (event.depth === 0) return;
    if (event.type === 'agent.start') this.running.add(event.path);
    else if (event.type === 'agent.end') this.running.delete(event.path);
  }

  paths(): string[] {
    return [...this.running];
  }
}

/** The stderr line printed when a signal stops the run. */
export function interruptedLine(signal: StopSignal, running: string[]): string {
  const what = running.length > 0 ? `; stopping ${running.join(', ')}` : '';
  return `axe: interrupted by ${signal}${what}\n`;
}
