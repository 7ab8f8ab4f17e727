import { readRegularFile } from '../fs/read-bounded.js';
import { READ_LIMITS } from '../fs/read-limits.js';

/** sha256 of an agent file's bytes, to tell later whether it changed. */
export async function fileDigest(file: string): Promise<string> {
  const { createHash } = await import('node:crypto');
  return createHash('sha256')
    .update(await readRegularFile(file, READ_LIMITS.agentFile))
    .digest('hex');
}
