import { basename, extname } from 'node:path';
import { FileProblem, formatProblem, unreadableFile } from '../config/file-problem.js';
import { own } from '../config/own.js';
import { parseField, type SchemaProblem, validateIgnoringUnknown } from '../config/schema-messages.js';
import { decodeUtf8Strict } from '../config/utf8.js';
import { ConfigError } from '../errors.js';
import { readRegularFileSync } from '../fs/read-bounded.js';
import { READ_LIMITS } from '../fs/read-limits.js';
import type { JsonValue } from '../provider/types.js';
import { agentFiles, findAgentFile } from './agent-files.js';
import { AgentFileCache } from './file-cache.js';
import type { AgentFileData } from './file-data.js';
import type { Finding } from './finding.js';
import { goRuleFindings } from './go-rules.js';
import { goAxeWords } from './go-words.js';
import type { FieldNote, ParsedAgentFile } from './parsed-file.js';
import type { AgentSpec } from './spec.js';
import { toSpec } from './to-spec.js';

export type { Finding } from './finding.js';

export interface AgentFileReport {
  file: string;
  name: string;
  /** Set when the file has no errors. */
  spec?: AgentSpec;
  /** The file's fields as written (canonical keys, no defaults), set with `spec`. */
  data?: AgentFileData;
  findings: Finding[];
  /** Adds the line and column of the finding's field, when the file shows where it is. */
  locate: (finding: Finding) => Finding;
}

export function formatFinding(finding: Finding): string {
  return formatProblem(finding.file, finding.message, finding);
}

export async function loadAgent(
  name: string,
  options: { searchDirs: string[]; env: NodeJS.ProcessEnv },
): Promise<AgentSpec> {
  const file = await findAgentFile(name, options.searchDirs);
  if (!file) throw new ConfigError(`agent config not found: ${name}`);
  return loadAgentFile(file, options.env);
}

/** An agent file that does not load; `field` names the field of its first error, when there is one. */
export class AgentFileError extends ConfigError {
  constructor(
    message: string,
    readonly field: string | undefined,
  ) {
    super(message);
  }
}

/** Loads one agent file; the first error becomes the AgentFileError's one-line message. */
export async function loadAgentFile(path: string, env: NodeJS.ProcessEnv): Promise<AgentSpec> {
  return (await loadAgentFileData(path, env)).spec;
}

/** `loadAgentFile`, plus the fields as the file wrote them (for Go's `agents show`). */
export async function loadAgentFileData(
  path: string,
  env: NodeJS.ProcessEnv,
): Promise<{ spec: AgentSpec; data: AgentFileData }> {
  const report = await inspectAgentFile(path, env);
  if (report.spec && report.data) return { spec: report.spec, data: report.data };
  const errors = report.findings.filter((finding) => finding.severity === 'error');
  const first = errors[0]!;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more: run axe validate ${report.name})` : '';
  throw new AgentFileError(`${formatFinding(first)}${more}`, first.field);
}

/** Loads every agent of the search directories; a broken file is a problem, never a failure. */
export async function listAgents(
  searchDirs: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ agents: AgentSpec[]; problems: { file: string; message: string }[] }> {
  const cache = AgentFileCache.open(searchDirs, env);
  const reports = await Promise.all(
    (await agentFiles(searchDirs)).map(({ file }) => inspectAgentFile(file, env, cache)),
  );
  cache?.save();
  const agents: AgentSpec[] = [];
  const problems: { file: string; message: string }[] = [];
  for (const report of reports) {
    if (report.spec) agents.push(report.spec);
    else {
      const error = report.findings.find((finding) => finding.severity === 'error')!;
      problems.push({ file: report.file, message: formatFinding(error) });
    }
  }
  return { agents, problems };
}

/**
 * Reads, parses, validates and normalises one agent file, collecting every finding. The file is
 * read in one go (`readRegularFileSync`: a FIFO or a device is refused before it is opened), a
 * few syscalls instead of six thread-pool round trips: agent files are small, and they are read
 * before their agent starts — `agents list`'s dozens, the one `axe run` names, a parent's
 * sub-agents before its first request. With a listing's `cache`, an unchanged file that was found
 * clean before is not read again, nor resolved again when its agent depends on the file alone
 * (file-cache.ts).
 */
export async function inspectAgentFile(
  path: string,
  env: NodeJS.ProcessEnv,
  cache?: AgentFileCache,
): Promise<AgentFileReport> {
  const name = basename(path, extname(path));
  if (cache === undefined) return inspectParsed(path, name, env, () => parseAgentFile(path, name));
  const kept = cache.kept(path);
  if (kept?.spec !== undefined) {
    const data = kept.data as unknown as AgentFileData;
    return { file: path, name, spec: kept.spec, data, findings: [], locate: (finding) => finding };
  }
  // Whether resolving the file reads the environment: an agent that depends on it is not kept.
  const watched = watchReads(env);
  const keepClean = (report: AgentFileReport): AgentFileReport => {
    if (report.findings.length === 0 && report.data && report.spec) {
      const data = report.data as unknown as JsonValue;
      cache.keep(path, watched.read() ? { data } : { data, spec: report.spec });
    }
    return report;
  };
  if (kept !== undefined) {
    const report = await inspectParsed(path, name, watched.env, async () => ({
      data: kept.data,
      warnings: [],
      writtenAs: {},
    }));
    // Anything to say is said as a fresh read says it, with its line and column.
    if (report.findings.length === 0) return keepClean(report);
  }
  return keepClean(await inspectParsed(path, name, watched.env, () => parseAgentFile(path, name)));
}

/** `env`, and whether anything has read it since. */
function watchReads(env: NodeJS.ProcessEnv): { env: NodeJS.ProcessEnv; read: () => boolean } {
  let read = false;
  const watched = new Proxy(env, {
    get: (target, key) => {
      read = true;
      return Reflect.get(target, key);
    },
    has: (target, key) => {
      read = true;
      return Reflect.has(target, key);
    },
    ownKeys: (target) => {
      read = true;
      return Reflect.ownKeys(target);
    },
    getOwnPropertyDescriptor: (target, key) => {
      read = true;
      return Reflect.getOwnPropertyDescriptor(target, key);
    },
  });
  return { env: watched, read: () => read };
}

async function inspectParsed(
  path: string,
  name: string,
  env: NodeJS.ProcessEnv,
  parse: () => Promise<ParsedAgentFile>,
): Promise<AgentFileReport> {
  let parsed: ParsedAgentFile | undefined;
  const locate = (finding: Finding): Finding =>
    parsed && finding.line === undefined ? located(finding, parsed) : finding;
  const report: AgentFileReport = { file: path, name, findings: [], locate };
  try {
    const file = await parse();
    parsed = file;
    const warningOf = (warning: FieldNote): Finding =>
      located({ ...warning, severity: 'warning', file: path }, file);
    report.findings.push(...file.warnings.map(warningOf));
    const notes = (file.notes ?? []).map((note) =>
      located({ ...note, severity: 'info' as const, file: path }, file),
    );
    const { unknown, invalid } = await schemaErrors(file.data, file.knownFields ?? []);
    for (const [problem, severity] of [
      ...unknown.map((p) => [p, 'warning'] as const),
      ...invalid.map((p) => [p, 'error'] as const),
    ]) {
      const field = renameTopField(problem.field, file.writtenAs);
      const goWords = goAxeWords(field, problem.message);
      const message = goWords ? `${problem.message}; ${goWords}` : problem.message;
      report.findings.push(located({ file: path, severity, field, message }, file, problem.segments));
    }
    if (invalid.length > 0) return report;
    // The schema guarantees this shape (file-data.ts).
    const data = file.data as unknown as AgentFileData;
    // A valid file has only warnings so far.
    const spec = toSpec(data, {
      file: path,
      name,
      format: formatOf(path),
      env,
      warnings: report.findings.map(formatFinding),
      notes: notes.map(formatFinding),
      ...(file.dialect ? { dialect: file.dialect } : {}),
    });
    report.findings.push(...notes);
    const refused = [...goRuleFindings(spec), ...(await outputSchemaFindings(spec))].map(locate);
    report.findings.push(...refused);
    if (refused.length === 0) {
      report.spec = spec;
      report.data = data;
    }
  } catch (error) {
    report.findings.push(locate(findingOf(error, path)));
  }
  return report;
}

/** `[output] schema` compiled once at load: a schema ajv cannot use is an error naming its place. */
async function outputSchemaFindings(spec: AgentSpec): Promise<Finding[]> {
  const schema = spec.output?.schema;
  if (schema === undefined) return [];
  const { compileOutputSchema, OutputSchemaError } = await import('./output-schema.js');
  try {
    await compileOutputSchema(schema);
    return [];
  } catch (error) {
    if (!(error instanceof OutputSchemaError)) throw error;
    const inside = error.path
      .split('/')
      .slice(1)
      .map((key) => `.${key.replace(/~1/g, '/').replace(/~0/g, '~')}`)
      .join('');
    return [
      { file: spec.source, severity: 'error', field: `output.schema${inside}`, message: error.message },
    ];
  }
}

/** The file's data against the agent schema (see validateIgnoringUnknown). */
async function schemaErrors(
  data: JsonValue,
  alsoKnown: readonly string[],
): Promise<{ unknown: SchemaProblem[]; invalid: SchemaProblem[] }> {
  // Evaluated when first needed: a listing whose agents were all kept needs none.
  const { validate } = await import('./generated/agent-validator.js');
  if (validate(data)) return { unknown: [], invalid: [] };
  // The schema itself (for did-you-mean) is only needed to explain errors.
  const schema = (await import('../../schemas/agent.schema.json', { with: { type: 'json' } }))
    .default as unknown as JsonValue;
  return validateIgnoringUnknown(validate, data, schema, alsoKnown);
}

async function parseAgentFile(path: string, name: string): Promise<ParsedAgentFile> {
  let bytes: Buffer;
  try {
    bytes = readRegularFileSync(path, READ_LIMITS.agentFile);
  } catch (error) {
    throw unreadableFile(path, error);
  }
  const text = decodeUtf8Strict(bytes, path).replace(/^\uFEFF/, '');
  switch (formatOf(path)) {
    case 'toml':
      return { ...(await parseTomlAgent(text, path, name)), warnings: [], writtenAs: {} };
    case 'yaml': {
      const parsed = (await import('./parse-yaml.js')).parseYamlAgent(text, path);
      return (await import('./parse-markdown.js')).codexFile(parsed, '', name, path) ?? parsed;
    }
    case 'markdown':
      return (await import('./parse-markdown.js')).parseMarkdownAgent(text, path, name);
  }
}

/** A TOML syntax error in Go axe's words: `failed to parse agent config "<name>": …`. */
async function parseTomlAgent(text: string, path: string, name: string) {
  const { parseTomlFile } = await import('../config/toml.js');
  try {
    return parseTomlFile(text, path);
  } catch (error) {
    // Data the parser read but axe refuses (a date) names its field instead.
    if (!(error instanceof FileProblem) || error.location.field !== undefined) throw error;
    const reason = `failed to parse agent config ${JSON.stringify(name)}: ${error.reason}`;
    throw new FileProblem(error.file, reason, error.location);
  }
}

function located(finding: Finding, parsed: ParsedAgentFile, segments?: (string | number)[]): Finding {
  const path = segments ?? (finding.field ? parseField(finding.field) : []);
  const position = parsed.locate?.(path);
  return position ? { ...finding, line: position.line, column: position.column } : finding;
}

function renameTopField(field: string, writtenAs: Record<string, string>): string {
  // A nested field mapped on its own (a Codex `runConfig.maxTurns`), else its top-level table.
  const pair = /^[^.[]+\.[^.[]+/.exec(field)?.[0];
  const writtenPair = pair ? own(writtenAs, pair) : undefined;
  if (pair && writtenPair) return writtenPair + field.slice(pair.length);
  const top = /^[^.[]+/.exec(field)?.[0];
  const written = top ? own(writtenAs, top) : undefined;
  return top && written ? written + field.slice(top.length) : field;
}

/** A FileProblem as an error finding, its file, reason and place kept apart. */
export function problemFinding(problem: FileProblem): Finding {
  return { file: problem.file, severity: 'error', message: problem.reason, ...problem.location };
}

function findingOf(error: unknown, file: string): Finding {
  if (error instanceof FileProblem) return problemFinding(error);
  if (error instanceof ConfigError) return { file, severity: 'error', message: error.message };
  throw error;
}

function formatOf(path: string): AgentSpec['format'] {
  const extension = extname(path).toLowerCase();
  return extension === '.toml' ? 'toml' : extension === '.md' ? 'markdown' : 'yaml';
}
