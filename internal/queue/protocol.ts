import { createHash } from 'node:crypto';

/**
 * The version of what a queued item means: the batch row, the item, the stored agent tree and
 * the result. A worker runs only the batches of its own version and leaves the others for a worker
 * that speaks theirs. Bump it whenever a stored shape changes in a way an older worker would
 * misread.
 */
export const QUEUE_PROTOCOL = 1;

/** The schema of pg-boss's own tables, apart from axe's (`axe`). */
export const BOSS_SCHEMA = 'axe_boss';

/** Each batch is a pg-boss queue of its own: cancelling or removing one touches no other. */
export function queueName(batchId: string): string {
  return `axe-batch-${batchId}`;
}

/**
 * The pg-boss job id of an item: the same every time the item is queued in one generation, so that
 * queueing again after a crash adds nothing (pg-boss inserts a known id only once); a new
 * generation (a resume that runs the item again) is a new job.
 */
export function jobId(batchId: string, idx: number, generation: number): string {
  const hex = createHash('sha256').update(`${batchId}\0${idx}\0${generation}`).digest('hex');
  // A version-4-shaped UUID (the variant and version nibbles set), as PostgreSQL's uuid type takes it.
  const variant = ((Number.parseInt(hex[16] as string, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** What a job carries: which item of which batch, and the protocol it was queued under. */
export interface JobData {
  batch: string;
  idx: number;
  protocol: number;
}

/** An item's job, as it is queued (by an enqueue or a resume). */
export function jobOf(batchId: string, idx: number, generation: number): { id: string; data: JobData } {
  return { id: jobId(batchId, idx, generation), data: { batch: batchId, idx, protocol: QUEUE_PROTOCOL } };
}
