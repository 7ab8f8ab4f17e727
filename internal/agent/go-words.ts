/**
 * Go axe's own words for the rules it checks in an agent file (its `Validate`), appended to axe's
 * message so its users recognise them: `axe: <file>:<line>:<col>: <field>: <axe's words>; <Go's>`.
 */

/** Fields Go reports as `<field> must be non-negative`. */
const NON_NEGATIVE = new Set([
  'timeout',
  'sub_agents_config.max_depth',
  'sub_agents_config.timeout',
  'memory.last_n',
  'memory.max_entries',
  'retry.max_retries',
  'retry.initial_delay_ms',
  'retry.max_delay_ms',
  'budget.max_tokens',
]);

export function goAxeWords(field: string, message: string): string | undefined {
  const missing = message === 'missing required field';
  if (missing && (field === 'name' || field === 'model'))
    return `agent config missing required field: ${field}`;
  if (NON_NEGATIVE.has(field) && message.startsWith('must be >= 0')) return `${field} must be non-negative`;
  if (field === 'sub_agents_config.max_depth' && message.startsWith('must be <= 5')) {
    return 'sub_agents_config.max_depth cannot exceed 5';
  }
  if (field === 'artifacts.enabled' && (missing || message.startsWith('must be true'))) {
    return 'artifacts.dir is set but artifacts.enabled is false';
  }
  if (field === 'retry.backoff' && message.startsWith('must be one of')) {
    return 'retry.backoff must be one of: exponential, linear, fixed';
  }
  if (field === 'model' && message.startsWith('must be "provider/model"')) {
    return `invalid model format ${JSON.stringify(got(message) ?? '')}: expected provider/model-name`;
  }
  const mcp = /^(mcp_servers\[\d+\])\.(name|url)$/.exec(field);
  if (mcp && (missing || message.startsWith('must not be empty'))) return `${field} is required`;
  if (mcp?.[2] === 'url' && message.startsWith('must be an http'))
    return urlWords(mcp[1] ?? '', got(message));
  return undefined;
}

/** Go parses the URL first: another scheme, or an http(s) URL without a host. */
function urlWords(server: string, url: string | undefined): string | undefined {
  let scheme: string;
  try {
    scheme = new URL(url ?? '').protocol.replace(/:$/, '');
  } catch {
    return undefined;
  }
  return scheme === 'http' || scheme === 'https'
    ? `${server}.url must include a host`
    : `${server}.url must use http or https scheme, got ${JSON.stringify(scheme)}`;
}

/** The offending value of a schema message (`… (got "ftp://h/x")`), when it is a string. */
function got(message: string): string | undefined {
  const shown = /\(got ("(?:[^"\\]|\\.)*")\)/.exec(message)?.[1];
  if (shown === undefined) return undefined;
  try {
    return JSON.parse(shown) as string;
  } catch {
    return undefined;
  }
}
