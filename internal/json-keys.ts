/**
 * axe's JSON outputs name their keys in snake_case (`duration_ms`, `stop_reason`), as Go axe's
 * `--json` does, while the TypeScript objects behind them are camelCase. The conversion happens
 * here, once, where an object becomes JSON for the user (`--events`, `axe runs show --json`):
 * the code keeps its names and a new field needs no second spelling.
 */

/**
 * Keys whose values are data, copied as they are: a tool call's `input` / `arguments`, typed
 * `inputs`, a `submit_result` `output`, a JSON Schema's `parameters` / `schema`: their keys are the
 * model's or the user's, not axe's.
 */
const VERBATIM = new Set(['input', 'inputs', 'output', 'arguments', 'parameters', 'schema']);

/** `durationMs` → `duration_ms`; a key already in snake_case is left as it is. */
function snakeCase(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** A copy of a JSON value with every object key in snake_case, except inside data (`VERBATIM`). */
export function snakeCaseKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeCaseKeys);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[snakeCase(key)] = VERBATIM.has(key) ? inner : snakeCaseKeys(inner);
  }
  return out;
}
