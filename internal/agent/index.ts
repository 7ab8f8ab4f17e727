/** The agent library: loading the three file formats into AgentSpec, listing, linting, scaffolding. */
export { type LintOptions, type LintResult, lintAgents } from './lint.js';
export {
  AGENT_EXTENSIONS,
  type AgentFileReport,
  agentFiles,
  checkAgentName,
  type Finding,
  findAgentFile,
  formatFinding,
  inspectAgentFile,
  listAgents,
  loadAgent,
  loadAgentFile,
} from './load.js';
export { MODEL_ALIASES, parseModelRef } from './model.js';
export { scaffoldAgent } from './scaffold.js';
export type { AgentSpec, ModelRef } from './spec.js';
