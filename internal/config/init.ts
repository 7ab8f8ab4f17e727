import { join } from 'node:path';
import { ConfigError } from '../errors.js';
import { fsErrorReason } from '../fs/fs-error.js';
import { fsPromises } from '../fs/promises.js';
import { writeFileAtomic } from '../fs/write-atomic.js';

const CONFIG_TOML = `# axe global configuration: API keys and base URLs of LLM providers.
# Environment variables win over this file:
#   API key:  <PROVIDER>_API_KEY        (ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY, OPENROUTER_API_KEY)
#   Base URL: AXE_<PROVIDER>_BASE_URL   (AXE_ANTHROPIC_BASE_URL, AXE_OLLAMA_BASE_URL, ...)
# Keep this file private (mode 0600) if you put keys in it.

# [providers.anthropic]
# api_key = ""
# base_url = "https://api.anthropic.com"

# [providers.openai]
# api_key = ""
# base_url = "https://api.openai.com/v1"

# [providers.openrouter]
# api_key = ""
# http_referer = "https://example.com"   # sent as HTTP-Referer
# app_title = "my-app"                   # sent as X-Title

# [providers.google]
# api_key = ""

# [providers.ollama]
# base_url = "http://localhost:11434"

# Any OpenAI- or Anthropic-compatible server (model = "my-vllm/<model>"; key from MY_VLLM_API_KEY):
# [providers.my-vllm]
# base_url = "http://localhost:8000/v1"
# api = "openai"
`;

/** Go axe's sample skill sections: Purpose, Instructions, Output Format. */
const SAMPLE_SKILL = `# Sample Skill

## Purpose

A starting point for your own skills. A skill is a set of instructions an agent follows; point
an agent at one with skill = "skills/sample/SKILL.md" (or --skill), and it is appended to the
agent's system prompt.

## Instructions

1. State the one job this skill is for.
2. List the steps the agent takes, in order, as plainly as you would for a colleague.
3. Name the inputs it should expect and the limits it must respect.
4. Add a short example where the task is easy to get wrong.

## Output Format

Say what the answer must look like:

- **Format:** plain text, Markdown or JSON.
- **Structure:** the sections, lists or fields it contains.
- **Length:** roughly how long it should be.
`;

/**
 * `axe config init`: the config directory with its agents/ folder, a sample skill and a commented
 * config.toml (0600: keys may go in it). Files already there are left as they are.
 */
export async function initConfigDir(configDir: string): Promise<void> {
  try {
    // Never writable by others, whatever the umask: whoever may replace config.toml or plant an
    // agent there decides where the API keys go.
    await fsPromises().mkdir(join(configDir, 'agents'), { recursive: true, mode: 0o755 });
    await fsPromises().mkdir(join(configDir, 'skills', 'sample'), { recursive: true, mode: 0o755 });
    await writeIfMissing(join(configDir, 'skills', 'sample', 'SKILL.md'), SAMPLE_SKILL, 0o644);
    await writeIfMissing(join(configDir, 'config.toml'), CONFIG_TOML, 0o600);
  } catch (error) {
    throw new ConfigError(`config init: cannot create ${configDir}: ${fsErrorReason(error)}`);
  }
}

async function writeIfMissing(file: string, content: string, mode: number): Promise<void> {
  try {
    await writeFileAtomic(file, content, { mode, exclusive: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}
