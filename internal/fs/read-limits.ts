/**
 * The most axe reads of each kind of file a user names, so that a wrong path (a log, a disk
 * image, /dev/zero) is a clear error instead of a heap that grows until the machine swaps. The
 * "Limits" in docs/config.md lists them.
 */
const MiB = 2 ** 20;

export const READ_LIMITS = {
  agentFile: 1 * MiB,
  configFile: 1 * MiB,
  skill: 4 * MiB,
  contextFile: 4 * MiB,
  /** All `files` of one agent together. */
  contextTotal: 16 * MiB,
  stdin: 16 * MiB,
  cassette: 256 * MiB,
  memory: 64 * MiB,
} as const;
