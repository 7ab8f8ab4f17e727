import { own } from '../config/own.js';
import { isObject } from '../provider/json.js';
import type { JsonObject, JsonValue } from '../provider/types.js';
import { mapTools } from './foreign-tools.js';
import { defineOwn, type MappedFrontMatter, mapModel, withNameModelAndPrompt } from './markdown-fields.js';

/**
 * Codex-style agent definitions (`agentType`, `whenToUse`, `modelConfig`, `runConfig`, …), in a
 * YAML file or as Markdown front-matter, mapped onto axe's own fields: the name and description,
 * `[params]`, `[budget]`, `[input]`, `[output]`, `fork_context`. Pure: the result is validated
 * by the same schema as every other agent file. Any other key goes through as written (axe's own
 * fields may sit beside Codex's), where the schema names one it does not know.
 */

/** Whether a parsed definition is in Codex's shape: it names itself with `agentType`. */
export function isCodexDefinition(data: JsonValue): data is JsonObject {
  return isObject(data) && Object.hasOwn(data, 'agentType');
}

/**
 * Codex's nested fields, each with the axe field it lands in (`table.key`); schemas/
 * codex-agent.schema.json describes the same shape (a test keeps them together).
 */
export const NESTED: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  modelConfig: {
    model: 'model',
    temperature: 'params.temperature',
    topP: 'params.top_p',
    thinkingBudget: 'params.thinking_budget',
  },
  runConfig: {
    maxTurns: 'budget.max_turns',
    maxTimeSeconds: 'budget.timeout',
    gracePeriodSeconds: 'budget.grace_period',
  },
  outputConfig: { outputName: 'output.name', description: 'output.description', schema: 'output.schema' },
  promptConfig: { systemPrompt: 'system_prompt', query: 'query' },
  inputConfig: { inputs: 'input' },
};

/** Codex's top-level fields with a place of their own in axe. */
const TOP: Readonly<Record<string, string>> = {
  agentType: 'name',
  displayName: 'display_name',
  whenToUse: 'description',
  forkContext: 'fork_context',
};

/** Codex fields axe has no place for: a warning each, never a silent drop. */
const UNMAPPED: Readonly<Record<string, string>> = {
  source: 'axe knows a definition by the file it is in',
};

/** The keys of a Codex definition, for the did-you-mean of an unknown one. */
export const CODEX_FIELD_NAMES: readonly string[] = [
  ...Object.keys(TOP),
  ...Object.keys(NESTED),
  ...Object.keys(UNMAPPED),
  'tools',
  'disallowedTools',
];

/** A Codex definition (`body`: a Markdown file's prompt) as axe's fields. */
export function mapCodexDefinition(
  definition: JsonObject,
  body: string,
  fileName: string,
): MappedFrontMatter {
  const result: MappedFrontMatter = { data: {}, warnings: [], errors: [], notes: [], writtenAs: {} };
  const { data, warnings, errors, writtenAs } = result;
  /** Sets `table.key` (or a top-level `key`) once; `written` is the field as the file spells it. */
  const set = (path: string, value: JsonValue, written: string): void => {
    const [top, key] = path.split('.') as [string, string | undefined];
    const writtenTop = written.split('.')[0] ?? written;
    if (writtenTop !== top && own(writtenAs, top) === undefined) defineOwn(writtenAs, top, writtenTop);
    if (key === undefined) {
      if (Object.hasOwn(data, top)) {
        errors.push({ field: written, message: `gives "${top}" a second time` });
        return;
      }
      defineOwn(data, top, value);
      return;
    }
    // `budget.max_turns` was written `runConfig.maxTurns`: the schema's findings say so.
    if (written !== path) defineOwn(writtenAs, path, written);
    const table = isObject(data[top]) ? data[top] : {};
    if (Object.hasOwn(table, key)) {
      errors.push({ field: written, message: `gives "${path}" a second time` });
      return;
    }
    defineOwn(table, key, value);
    defineOwn(data, top, table);
  };
  for (const [key, value] of Object.entries(definition)) {
    const top = own(TOP, key);
    const nested = own(NESTED, key);
    const unmapped = own(UNMAPPED, key);
    if (top !== undefined) set(top, value, key);
    else if (unmapped !== undefined) {
      warnings.push({ field: key, message: `Codex field not mapped by axe (${unmapped}); ignored` });
    } else if (key === 'tools' || key === 'disallowedTools') {
      set(key === 'tools' ? 'tools' : 'disallowed_tools', mapTools(value, key, warnings, undefined), key);
    } else if (nested !== undefined) {
      if (!isObject(value)) {
        errors.push({ field: key, message: `must be a mapping of ${Object.keys(nested).join(', ')}` });
        continue;
      }
      for (const [inner, innerValue] of Object.entries(value)) {
        const target = own(nested, inner);
        const written = `${key}.${inner}`;
        if (target === undefined) {
          warnings.push({ field: written, message: 'Codex field not mapped by axe; ignored' });
        } else if (target === 'model' && typeof innerValue === 'string') {
          set(target, mapModel(innerValue), written);
        } else set(target, innerValue, written);
      }
    } else set(key, value, key);
  }
  withNameModelAndPrompt(data, fileName, body, errors, 'promptConfig.systemPrompt');
  return result;
}
