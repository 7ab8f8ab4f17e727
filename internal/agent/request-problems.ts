import { type RequestProblems, requestProblems } from '../provider/request-support.js';
import type { ProviderApi } from '../provider/types.js';
import type { AgentSpec } from './spec.js';

/**
 * What the requests of `spec` (to `model` on `api`, offering tools or not) ask of the API that it
 * does not do (request-support.ts): the run warns or stops on them, `axe validate` reports them.
 */
export function agentRequestProblems(
  api: ProviderApi,
  spec: AgentSpec,
  model: string,
  hasTools: boolean,
): RequestProblems {
  return requestProblems(api, {
    model,
    ...(spec.params.responseFormat ? { responseFormat: spec.params.responseFormat.type } : {}),
    hasTools,
    ...(spec.output?.schema ? { outputSchema: spec.output.schema } : {}),
    ...(spec.params.promptCaching ? { promptCaching: true } : {}),
  });
}
