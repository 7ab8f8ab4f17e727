import { ConfigError } from '../errors.js';
import type { JsonValue } from '../provider/types.js';
import type { AgentSpec, InputSpec } from './spec.js';

/** Values of an agent's typed inputs, by name, each of its declared type. */
export type InputValues = Record<string, JsonValue>;

/** A missing, unknown or mistyped input: exit 2 at the top level, an error result for a child. */
export class InputError extends ConfigError {}

/**
 * `given` checked against the agent's `[input]` table: every name declared, every required one
 * present, every value of its type. A string stands for a number, integer, boolean or list
 * (`--input n=3`, `--input tags=a,b` or `tags=["a","b"]`), as callers and models write them.
 */
export function checkInputs(spec: AgentSpec, given: Readonly<Record<string, JsonValue>>): InputValues {
  const declared = new Map(spec.inputs.map((input) => [input.name, input]));
  const values: InputValues = {};
  for (const [name, value] of Object.entries(given)) {
    const input = declared.get(name);
    if (!input) {
      const takes = spec.inputs.length === 0 ? 'takes no inputs' : `takes ${describeInputNames(spec)}`;
      throw new InputError(`unknown input "${name}": agent "${spec.name}" ${takes}`);
    }
    values[name] = coerce(input, value);
  }
  for (const input of spec.inputs) {
    if (input.required && !(input.name in values)) {
      throw new InputError(
        `agent "${spec.name}": missing required input "${input.name}" (${describeInput(input)})`,
      );
    }
  }
  return values;
}

function coerce(input: InputSpec, value: JsonValue): JsonValue {
  const fail = (): never => {
    throw new InputError(
      `input "${input.name}" must be ${ARTICLES[input.type]} (got ${JSON.stringify(value)})`,
    );
  };
  switch (input.type) {
    case 'string':
      return typeof value === 'string' ? value : fail();
    case 'boolean':
      if (typeof value === 'boolean') return value;
      if (value === 'true') return true;
      if (value === 'false') return false;
      return fail();
    case 'number':
    case 'integer': {
      const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isFinite(n)) return fail();
      return input.type === 'integer' && !Number.isInteger(n) ? fail() : n;
    }
    case 'string[]':
    case 'number[]': {
      const list = typeof value === 'string' ? listFromString(value) : value;
      if (!Array.isArray(list)) return fail();
      const item: InputSpec = { ...input, type: input.type === 'string[]' ? 'string' : 'number' };
      try {
        return list.map((element) => coerce(item, element));
      } catch {
        return fail();
      }
    }
  }
}

const ARTICLES: Record<InputSpec['type'], string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'true or false',
  'string[]': 'a list of strings',
  'number[]': 'a list of numbers',
};

/** `["a","b"]` as JSON, else `a,b` split on commas. */
function listFromString(text: string): JsonValue {
  if (text.trimStart().startsWith('[')) {
    try {
      return JSON.parse(text) as JsonValue;
    } catch {
      return text;
    }
  }
  return text === '' ? [] : text.split(',').map((part) => part.trim());
}

/** `--input key=value` (repeatable) and `--inputs-json '{…}'`: the values as given, unchecked. */
export function inputsFromFlags(
  pairs: readonly string[],
  json: string | undefined,
): Record<string, JsonValue> {
  const given: Record<string, JsonValue> = {};
  if (json !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch {
      throw new InputError('--inputs-json: expected a JSON object of input values');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new InputError('--inputs-json: expected a JSON object of input values');
    }
    Object.assign(given, parsed);
  }
  for (const pair of pairs) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new InputError(`--input "${pair}": expected name=value`);
    given[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return given;
}

/**
 * The system prompt (or `query`) of an agent with inputs: `${name}` of each declared input takes
 * its value (an unset optional one: empty), `${cwd}` the workdir, `${agent}` the agent's name; any
 * other `${…}` is left as written. An agent without inputs is returned unchanged, but for a Codex
 * definition, which substitutes `${cwd}` whatever it declares.
 */
export function substituteInputs(
  prompt: string,
  spec: AgentSpec,
  values: InputValues,
  where: { cwd: string },
): string {
  if (spec.inputs.length === 0 && spec.dialect !== 'codex') return prompt;
  const known = new Map<string, string>([
    ['cwd', where.cwd],
    ['agent', spec.name],
  ]);
  for (const input of spec.inputs) {
    const value = values[input.name];
    known.set(
      input.name,
      value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value),
    );
  }
  return prompt.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (whole, name: string) => known.get(name) ?? whole);
}

/** `file_path (string, required): File to review` */
export function describeInput(input: InputSpec): string {
  const head = `${input.name} (${input.type}${input.required ? ', required' : ''})`;
  return input.description === '' ? head : `${head}: ${input.description}`;
}

function describeInputNames(spec: AgentSpec): string {
  return spec.inputs.map((input) => input.name).join(', ');
}
