import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { childContext } from '../../internal/delegation/child-context.js';
import type { RunContext } from '../../internal/runner/context.js';

v8.setFlagsFromString('--allow-natives-syntax');
const sameHiddenClass = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (
  a: object,
  b: object,
) => boolean;

describe("a child's context", () => {
  it('fifty children of one parent, with their own paths, inputs and limits: one hidden class', () => {
    const parent = {
      path: 'lead',
      depth: 0,
      maxDepth: 3,
      signal: new AbortController().signal,
      deadline: Date.now() + 120_000,
      deadlineSeconds: 120,
      budget: {},
      limits: {},
      limiter: {},
      emit: () => {},
      providers: {},
      loadAgent: async () => ({}),
      resolveAgent: async () => ({}),
      env: {},
      configDir: '/config',
      stream: false,
      inheritedModel: undefined,
      inheritedAllowedHosts: [],
      inputs: {},
      readOnly: false,
      overrides: {},
      artifacts: {},
      keepArtifacts: false,
      conversations: new Map(),
    } as unknown as RunContext;
    const children = Array.from({ length: 50 }, (_, i) =>
      childContext(parent, {
        agent: 'w',
        step: `call_agent#${i + 1}`,
        timeoutSeconds: 0,
        parentModel: { provider: 'anthropic', model: 'm' },
        parentAllowedHosts: [],
        limits: { n: i } as never,
        inputs: { part: i },
        readOnly: false,
        stream: false,
      }),
    );
    const [first] = children;
    expect(children.every((child) => sameHiddenClass(first?.ctx as object, child.ctx))).toBe(true);
    expect(children.map((child) => child.ctx.path).slice(0, 2)).toEqual([
      'lead/call_agent#1:w',
      'lead/call_agent#2:w',
    ]);
  });
});
