import type { CommandRules, ToolTier } from '../agent/spec.js';
import type { JsonObject } from '../provider/types.js';

/*
 * Tool tiers and `[permissions]`: which of an agent's tool calls run, which are denied, and which
 * need someone's approval first. Pure: asking is the delegation room's job.
 */

const ORDER: readonly ToolTier[] = ['read', 'write', 'shell'];

/** The tier a tool needs: file changes `write`, commands and MCP tools that change things `shell`. */
export function tierOf(name: string, readOnly: boolean): ToolTier {
  if (name === 'write_file' || name === 'edit_file') return 'write';
  if (name === 'run_command') return 'shell';
  return readOnly ? 'read' : 'shell';
}

/** What to do with one call. */
export type CallGate = { kind: 'run' } | { kind: 'deny'; reason: string } | { kind: 'ask'; why: string };

const RUN: CallGate = { kind: 'run' };

/**
 * The gate of a call to `name` (needing `needs`) by an agent of `tier` with `rules`: a denied
 * command first, then an allowed one, then the tier (and, with an allow list, any other command)
 * decides whether it runs or must be approved.
 */
export function gateCall(
  name: string,
  needs: ToolTier,
  args: JsonObject,
  tier: ToolTier | undefined,
  rules: CommandRules,
): CallGate {
  if (name === 'run_command' && typeof args.command === 'string') {
    const { command } = args;
    const denied = rules.deny.find((prefix) => segments(command).some((part) => startsWith(part, prefix)));
    if (denied !== undefined) {
      return { kind: 'deny', reason: `the command matches [permissions] deny "${denied}"` };
    }
    if (!compound(command) && rules.allow.some((prefix) => startsWith(command.trim(), prefix))) return RUN;
    if (rules.allow.length > 0) {
      return { kind: 'ask', why: 'the command matches no [permissions] allow rule' };
    }
  }
  if (tier === undefined || ORDER.indexOf(needs) <= ORDER.indexOf(tier)) return RUN;
  return { kind: 'ask', why: `${name} needs the "${needs}" tier, above this agent's "${tier}"` };
}

/** `git diff` starts `git diff --stat`, not `git difftool`. */
function startsWith(command: string, prefix: string): boolean {
  const p = prefix.trim();
  return command === p || command.startsWith(`${p} `);
}

/** Shell operators that join or nest commands: an allow rule never covers such a command whole. */
const COMPOUND = /[;&|<>`\n]|\$\(/;

function compound(command: string): boolean {
  return COMPOUND.test(command);
}

/** The simple commands of a compound one, each trimmed (a deny rule looks at every one). */
function segments(command: string): string[] {
  return command
    .split(/[;&|\n`]|\$\(|\)/)
    .map((part) => part.trim())
    .filter((part) => part !== '');
}
