import { untilAborted } from '../abort.js';
import type { ChatRequest } from '../provider/types.js';

/**
 * `[sub_agents_config] cache_warmup`: the children of one agent that send the same prompt prefix
 * (provider, model, system prompt, tools) share its cache entry. A provider makes an entry readable
 * once the answer of the request that wrote it has begun; children started together would each
 * write it (a quarter more than the input price on Anthropic) and read nothing. So the first
 * child's first request goes out alone, and the others with that prefix as soon as its answer
 * begins — or fails: a failure lets them go too, as without warming.
 */
export class CacheWarmup {
  readonly #begun = new Map<string, Promise<void>>();

  /**
   * Waits (bounded by `signal`, which carries the agent's deadline) while another request with the
   * same prefix is on its way; returns `begun` to call when this request's answer begins (or it
   * fails) when it is the first, undefined when there is nothing to tell.
   */
  async before(
    provider: string,
    request: ChatRequest,
    signal: AbortSignal,
  ): Promise<(() => void) | undefined> {
    const key = prefixKey(provider, request);
    const earlier = this.#begun.get(key);
    if (earlier !== undefined) {
      await untilAborted(earlier, signal);
      return undefined;
    }
    let begun = (): void => {};
    this.#begun.set(key, new Promise<void>((resolve) => (begun = resolve)));
    return begun;
  }
}

function prefixKey(provider: string, request: ChatRequest): string {
  // node:crypto is loaded only by a run that warms a cache: a plain run loads none of it.
  const hash = process
    .getBuiltinModule('node:crypto')
    .createHash('sha256')
    .update(`${provider}\0${request.model}\0${request.system}\0`);
  hash.update(JSON.stringify(request.tools ?? []));
  return hash.digest('hex');
}
