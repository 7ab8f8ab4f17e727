import type { AgentSpec } from '../agent/spec.js';
import type { JsonValue } from '../provider/types.js';
import type { RawItem } from './input.js';

/** One item of a batch, ready to run: its key, the user message and the agent's inputs. */
export interface BatchItem {
  line: number;
  key: string;
  message: string;
  inputs: Record<string, JsonValue>;
  /** Set when the item could not be read: it is that item's `error`, and it does not run. */
  error?: string;
}

export interface ItemRules {
  spec: AgentSpec;
  /** `--key FIELD`; without it an item's key is its line number. */
  keyField?: string;
  /** `-p`: the text every item's message starts with. */
  prompt?: string;
  /** The message of an item that brings none (Go axe's default user message). */
  defaultMessage: string;
}

/** The fields that carry an item's message when the agent does not take them as inputs. */
const MESSAGE_FIELDS = ['message', 'prompt'] as const;

/** The key of a raw item (`--key`'s field as text, else the line number); undefined when the field is missing. */
export function itemKey(raw: RawItem, keyField: string | undefined): string | undefined {
  if (keyField === undefined) return String(raw.line);
  const value = raw.fields?.[keyField];
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/**
 * A raw item as the agent takes it: fields named as the agent's `[input.*]` fill them (checked by
 * the run, so a bad value fails that item only); otherwise `message` (or `prompt`) is the message;
 * an item with neither is sent whole, as JSON text. `-p`'s text comes first, then a blank line.
 */
export function toItem(raw: RawItem, rules: ItemRules): BatchItem {
  const key = itemKey(raw, rules.keyField) ?? `line ${raw.line}`;
  const base = { line: raw.line, key, inputs: {} };
  if (raw.error !== undefined) return { ...base, message: '', error: raw.error };
  if (rules.keyField !== undefined && itemKey(raw, rules.keyField) === undefined) {
    return { ...base, message: '', error: `line ${raw.line}: no "${rules.keyField}" field (--key)` };
  }
  let text: string | undefined = raw.text;
  const inputs: Record<string, JsonValue> = {};
  if (raw.fields) {
    const declared = new Set(rules.spec.inputs.map((input) => input.name));
    for (const [name, value] of Object.entries(raw.fields)) if (declared.has(name)) inputs[name] = value;
    const field = MESSAGE_FIELDS.find(
      (name) => !declared.has(name) && typeof raw.fields?.[name] === 'string',
    );
    if (field !== undefined) text = raw.fields[field] as string;
    else if (declared.size === 0) text = JSON.stringify(raw.fields);
  }
  const parts = [rules.prompt, text].filter(
    (part): part is string => part !== undefined && part.trim() !== '',
  );
  return { ...base, inputs, message: parts.length > 0 ? parts.join('\n\n') : rules.defaultMessage };
}
