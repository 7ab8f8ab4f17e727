/**
 * The `axe agents init` template: every field of schemas/agent.schema.json, the optional ones
 * commented out with an example value. A test checks it against the schema, so they cannot drift.
 */
export function scaffoldAgent(name: string): string {
  return `# axe agent file. Reference: the README's "Agent file reference" (schemas/agent.schema.json).
name = ${JSON.stringify(name)}
description = ""

# provider/model (anthropic, openai, openrouter, ollama, google, or a provider from config.toml),
# or "inherit" to use the caller's model
model = "anthropic/claude-sonnet-4-5"

# Persona and instructions
# system_prompt = "You are a careful assistant."

# SKILL.md appended to the prompt: absolute, relative to the config dir, or a skill name
# skill = "skills/sample/SKILL.md"

# Context files: globs relative to the workdir
# files = ["README.md", "src/**/*.ts"]

# Working directory and sandbox of the file tools (~ and $VAR expanded; default: current dir)
# workdir = "~/projects/app"

# Seconds for the whole run (default 120)
# timeout = 120

# Print the answer as it arrives
# stream = false

# Built-in tools: list_directory, read_file, write_file, edit_file, run_command, url_fetch, web_search
# tools = ["read_file", "list_directory"]
# disallowed_tools = ["run_command"]

# Hosts url_fetch may reach (empty = any public host)
# allowed_hosts = ["docs.example.com"]

# Most model turns per run (hard limit 50)
# max_turns = 20

# Agents this one may call with the call_agent tool
# sub_agents = ["helper"]

# [sub_agents_config]
# max_depth = 3
# parallel = true
# timeout = 120
# max_parallel = 16

# [memory]
# enabled = false
# path = "~/notes/memory.md"
# last_n = 10
# max_entries = 100

# [params]
# temperature = 0.3
# max_tokens = 4096
# response_format = "json_object"

# [retry]
# max_retries = 2
# backoff = "exponential"
# initial_delay_ms = 500
# max_delay_ms = 30000

# Token budget of the whole agent tree (0 = unlimited; exit 4 when exceeded)
# [budget]
# max_tokens = 50000

# Files agents hand to each other (file tools with artifact = true); default dir: a temp dir
# [artifacts]
# enabled = true
# dir = "~/project-artifacts"
# default_write = false

# MCP servers: stdio (command, args, env) or sse / streamable-http (url, headers); \${VAR} is expanded
# [[mcp_servers]]
# name = "filesystem"
# transport = "stdio"
# command = "npx"
# args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
# env = { LOG_LEVEL = "warn" }
#
# [[mcp_servers]]
# name = "remote"
# transport = "streamable-http"
# url = "https://mcp.example.com/mcp"
# headers = { Authorization = "Bearer \${MCP_TOKEN}" }
`;
}
