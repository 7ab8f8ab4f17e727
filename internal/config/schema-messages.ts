import type { ErrorObject } from 'ajv';
import { isObject } from '../provider/json.js';
import type { JsonValue } from '../provider/types.js';
import { redactUrl } from '../redact.js';
import { suggestion } from './did-you-mean.js';
import { own } from './own.js';

/** One schema violation, in words: `field` is the dotted path (`mcp_servers[0].url`, '' = the file). */
export interface SchemaProblem {
  field: string;
  /** The path as keys and indexes, for parsers that can locate it (YAML). */
  segments: (string | number)[];
  message: string;
}

/** Messages for the `pattern`s used in schemas/, keyed by the pattern itself. */
const PATTERN_MESSAGES: Record<string, string> = {
  '\\S': 'must not be empty',
  '^(inherit|[^/\\s]+/\\S.*)$': 'must be "provider/model" (e.g. "anthropic/claude-sonnet-5-5") or "inherit"',
  '^[^/\\\\]+$': 'must be an agent name, without "/" or "\\"',
  '^https?://[^/?#\\s]+': 'must be an http:// or https:// URL with a host',
  '^$|^https?://[^/?#\\s]+': 'must be empty or an http:// or https:// URL with a host',
  '^[A-Za-z0-9_-]{1,64}$': 'must be 1-64 letters, digits, "_" or "-"',
  '^(?!.*\\.\\.)': 'must not contain ".."',
};

/**
 * Turns ajv errors into one message per problem, naming the field, what was expected and what was
 * found; unknown keys get a did-you-mean from the schema's own property names.
 */
function describeSchemaErrors(errors: ErrorObject[], data: JsonValue, schema: JsonValue): SchemaProblem[] {
  const kept = dropCombinatorNoise(errors, data);
  const problems: SchemaProblem[] = [];
  for (const error of kept) {
    const segments = pointerSegments(error.instancePath);
    const value = valueAt(data, segments);
    const shown = isSecret(segments) ? kindOf(value) : show(value);
    const params = error.params as Record<string, unknown>;
    switch (error.keyword) {
      case 'additionalProperties': {
        const key = String(params.additionalProperty);
        const known = propertyNames(schema, error.schemaPath);
        problems.push(problem([...segments, key], `unknown field${suggestion(key, known)}`));
        break;
      }
      case 'required':
        problems.push(problem([...segments, String(params.missingProperty)], 'missing required field'));
        break;
      case 'type':
        problems.push(problem(segments, `must be ${article(String(params.type))} (got ${shown})`));
        break;
      case 'minimum':
      case 'maximum':
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        problems.push(
          problem(segments, `must be ${String(params.comparison)} ${String(params.limit)} (got ${shown})`),
        );
        break;
      case 'enum': {
        const allowed = (params.allowedValues as JsonValue[]).map((item) => JSON.stringify(item));
        const hint =
          typeof value === 'string' ? suggestion(value, (params.allowedValues as string[]).map(String)) : '';
        problems.push(problem(segments, `must be one of ${allowed.join(', ')} (got ${shown})${hint}`));
        break;
      }
      case 'pattern': {
        const expected =
          own(PATTERN_MESSAGES, String(params.pattern)) ?? `must match ${String(params.pattern)}`;
        problems.push(problem(segments, `${expected} (got ${shown})`));
        break;
      }
      case 'const':
        problems.push(problem(segments, `must be ${JSON.stringify(params.allowedValue)} (got ${shown})`));
        break;
      case 'anyOf':
        problems.push(problem(segments, anyOfMessage(errors, error)));
        break;
      case 'oneOf':
        problems.push(
          problem(segments, `must be ${oneOfAlternatives(schema, error.schemaPath)} (got ${shown})`),
        );
        break;
      default:
        problems.push(problem(segments, error.message ?? 'is invalid'));
    }
  }
  return problems;
}

/** Keys and header / env values are never echoed, not even when they are of the wrong type. */
function isSecret(segments: (string | number)[]): boolean {
  return segments.some((segment) => segment === 'api_key' || segment === 'headers' || segment === 'env');
}

function problem(segments: (string | number)[], message: string): SchemaProblem {
  return { field: formatField(segments), segments, message };
}

/** `mcp_servers[0].url` → `['mcp_servers', 0, 'url']`: the inverse of formatField. */
export function parseField(field: string): (string | number)[] {
  return [...field.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((match) =>
    match[2] !== undefined ? Number(match[2]) : (match[1] ?? ''),
  );
}

function formatField(segments: (string | number)[]): string {
  let out = '';
  for (const segment of segments) {
    const name = typeof segment === 'number' ? '' : visible(segment);
    out += typeof segment === 'number' ? `[${segment}]` : out ? `.${name}` : name;
  }
  return out;
}

/**
 * A key as the file wrote it, its control characters escaped: a file from a cloned repository
 * could otherwise move the cursor, clear the screen or start a new line in the error axe prints.
 */
function visible(key: string): string {
  return key.replace(/\p{Cc}/gu, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * `if` errors only say "must match then"; children of a combinator repeat what the combinator
 * says. For `oneOf`, when the value has the type of one branch, that branch's errors are the
 * useful ones, so they are kept instead of the combinator's summary.
 */
function dropCombinatorNoise(errors: ErrorObject[], data: JsonValue): ErrorObject[] {
  const combinators = errors.filter((error) => error.keyword === 'oneOf' || error.keyword === 'anyOf');
  const dropped = new Set<ErrorObject>(errors.filter((error) => error.keyword === 'if'));
  for (const combinator of combinators) {
    const prefix = `${combinator.schemaPath}/`;
    const children = errors.filter((error) => error.schemaPath.startsWith(prefix));
    const matchingBranch =
      combinator.keyword === 'oneOf' ? branchOfSameType(children, combinator, data) : undefined;
    if (matchingBranch === undefined) {
      for (const child of children) dropped.add(child);
    } else {
      dropped.add(combinator);
      for (const child of children) if (!child.schemaPath.startsWith(matchingBranch)) dropped.add(child);
    }
  }
  return errors.filter((error) => !dropped.has(error));
}

function branchOfSameType(
  children: ErrorObject[],
  combinator: ErrorObject,
  data: JsonValue,
): string | undefined {
  const branches = new Set(
    children.map((child) =>
      child.schemaPath.slice(0, child.schemaPath.indexOf('/', combinator.schemaPath.length + 1)),
    ),
  );
  const mistyped = new Set(
    children
      .filter(
        (child) =>
          child.instancePath === combinator.instancePath &&
          (child.keyword === 'type' || child.keyword === 'enum'),
      )
      .map((child) =>
        child.schemaPath.slice(0, child.schemaPath.indexOf('/', combinator.schemaPath.length + 1)),
      ),
  );
  const candidates = [...branches].filter((branch) => !mistyped.has(branch));
  const value = valueAt(data, pointerSegments(combinator.instancePath));
  return candidates.length === 1 && value !== null && typeof value === 'object'
    ? `${candidates[0]}/`
    : undefined;
}

function anyOfMessage(errors: ErrorObject[], combinator: ErrorObject): string {
  const prefix = `${combinator.schemaPath}/`;
  const missing = errors
    .filter((error) => error.schemaPath.startsWith(prefix) && error.keyword === 'required')
    .map((error) => `"${String((error.params as Record<string, unknown>).missingProperty)}"`);
  return missing.length > 0 ? `needs one of ${missing.join(', ')}` : 'matches none of the allowed forms';
}

function oneOfAlternatives(schema: JsonValue, schemaPath: string): string {
  const branches = schemaAt(schema, schemaPath);
  if (!Array.isArray(branches)) return 'one of the allowed forms';
  const words = branches.map((branch) => {
    if (!isObject(branch)) return 'a value';
    if (Array.isArray(branch.enum)) return branch.enum.map((item) => JSON.stringify(item)).join(', ');
    return article(String(branch.type));
  });
  return words.join(' or ');
}

function propertyNames(schema: JsonValue, schemaPath: string): string[] {
  const parent = schemaAt(schema, schemaPath.replace(/\/additionalProperties$/, ''));
  return isObject(parent) && isObject(parent.properties) ? Object.keys(parent.properties) : [];
}

/** The schema node a `schemaPath` (`#/properties/a/oneOf/1`) points at. */
function schemaAt(schema: JsonValue, schemaPath: string): JsonValue | undefined {
  let node: JsonValue | undefined = schema;
  for (const segment of pointerSegments(schemaPath.replace(/^#/, ''))) {
    if (Array.isArray(node) && typeof segment === 'number') node = node[segment];
    else if (isObject(node)) node = node[String(segment)];
    else return undefined;
  }
  return node;
}

function pointerSegments(pointer: string): (string | number)[] {
  if (!pointer) return [];
  return pointer
    .slice(1)
    .split('/')
    .map((raw) => raw.replace(/~1/g, '/').replace(/~0/g, '~'))
    .map((segment) => (/^(0|[1-9]\d*)$/.test(segment) ? Number(segment) : segment));
}

function valueAt(data: JsonValue, segments: (string | number)[]): JsonValue | undefined {
  let node: JsonValue | undefined = data;
  for (const segment of segments) {
    if (Array.isArray(node) && typeof segment === 'number') node = node[segment];
    else if (isObject(node) && Object.hasOwn(node, String(segment))) node = node[String(segment)];
    else return undefined;
  }
  return node;
}

function article(type: string): string {
  const names: Record<string, string> = {
    object: 'a table',
    array: 'a list',
    string: 'a string',
    integer: 'an integer',
    number: 'a number',
    boolean: 'true or false',
    null: 'null',
  };
  return type
    .split(',')
    .map((item) => names[item] ?? item)
    .join(' or ');
}

/** What a value is, without the value: `a number`, `a list`. */
function kindOf(value: JsonValue | undefined): string {
  if (value === undefined || value === null) return String(value ?? 'nothing');
  if (Array.isArray(value)) return 'a list';
  return isObject(value) ? 'a table' : `a ${typeof value}`;
}

/** A short rendering of a found value for `(got …)`; a URL's user info and query masked. */
function show(value: JsonValue | undefined): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'a list';
  if (isObject(value)) return 'a table';
  const text = JSON.stringify(typeof value === 'string' ? redactUrl(value) : value);
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** A compiled validator (schemas/generate-validators.mjs). */
export interface SchemaValidator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

/**
 * Validates `data` as Go axe's decoder reads a file, and Claude Code and opencode read theirs: a
 * key the schema does not know is ignored — dropped from `data` and returned as a warning with a
 * did-you-mean — unless it sits in an anyOf / oneOf branch, where it may choose the branch. Every
 * other violation is an error. Synchronous, so the validator's shared `errors` cannot be
 * overwritten by another load in between.
 */
export function validateIgnoringUnknown(
  validate: SchemaValidator,
  data: JsonValue,
  schema: JsonValue,
  /** Other top-level names worth suggesting (other programs' field names in a foreign file). */
  alsoKnown: readonly string[] = [],
): { unknown: SchemaProblem[]; invalid: SchemaProblem[] } {
  if (validate(data)) return { unknown: [], invalid: [] };
  const unknown = dropUnknownFields(validate.errors ?? [], data, schema, alsoKnown);
  if (validate(data)) return { unknown, invalid: [] };
  return { unknown, invalid: describeSchemaErrors(validate.errors ?? [], data, schema) };
}

function dropUnknownFields(
  errors: ErrorObject[],
  data: JsonValue,
  schema: JsonValue,
  alsoKnown: readonly string[],
): SchemaProblem[] {
  const dropped: SchemaProblem[] = [];
  for (const error of errors) {
    if (error.keyword !== 'additionalProperties' || /\/(anyOf|oneOf|allOf)\//.test(error.schemaPath))
      continue;
    const segments = pointerSegments(error.instancePath);
    const parent = valueAt(data, segments);
    const key = String((error.params as { additionalProperty: string }).additionalProperty);
    if (!isObject(parent) || !Object.hasOwn(parent, key)) continue;
    delete parent[key];
    const known = [...propertyNames(schema, error.schemaPath), ...(segments.length === 0 ? alsoKnown : [])];
    dropped.push(problem([...segments, key], `unknown field, ignored${suggestion(key, known)}`));
  }
  return dropped;
}
