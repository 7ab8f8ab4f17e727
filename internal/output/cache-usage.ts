import type { Usage } from '../provider/types.js';

/**
 * How much of the prompt the providers' caches served, for the human-readable views (`--verbose`,
 * `axe runs show`); undefined when nothing was read from or written to a cache, so that a run
 * without caching prints what it printed before.
 */
export function cacheUsageText(usage: Usage): string | undefined {
  const { inputTokens, cacheReadTokens: read, cacheWriteTokens: written } = usage;
  if (read + written === 0) return undefined;
  const prompt = inputTokens + read + written;
  const share = Math.round((read / prompt) * 100);
  return `${read} read from the cache, ${written} written, ${inputTokens} uncached (${share}% of ${prompt} prompt tokens cached)`;
}
