/**
 * The `axe agents init` template: Go axe's scaffold line for line (its v1.8 template), with the
 * fields axe adds inserted where they belong, each marked `(axe)`. A test checks that every field
 * of schemas/agent.schema.json appears, so they cannot drift.
 */
export function scaffoldAgent(name: string): string {
  return `name = ${JSON.stringify(name)}
description = ""
# (axe) a longer name for people, shown by agents show
# display_name = ""

# Full provider/model per models.dev
model = "provider/model-name"

# Agent persona (optional)
# system_prompt = ""
# (axe) the start of the first user message, before the task (\${input} and \${cwd} substituted)
# query = ""

# Default skill (optional, can be overridden with --skill flag)
# skill = ""

# Context files - glob patterns resolved from workdir or cwd (optional)
# files = []

# Working directory (optional)
# workdir = ""

# Tools this agent can use (optional)
# Valid: list_directory, read_file, write_file, edit_file, run_command, url_fetch, web_search
# (axe) also: glob_files, grep_files
# tools = []

# Sub-agents this agent can invoke (optional)
# sub_agents = []

# (axe) Seconds for the whole run (default 120); print the answer as it arrives
# timeout = 120
# stream = false
# (axe) Tools never offered; hosts url_fetch may reach (empty = any public host)
# disallowed_tools = ["run_command"]
# allowed_hosts = ["docs.example.com"]
# (axe) No writing tools (write_file, edit_file, run_command) for it and the agents it calls
# read_only = false
# (axe) as a sub-agent, start from the caller's conversation so far
# fork_context = false
# (axe) Most model turns per run (hard limit 50)
# max_turns = 20

# [sub_agents_config]
# max_depth = 3
# parallel = true
# timeout = 120
# (axe) run-wide limit of concurrent sub-agent calls
# max_parallel = 16
# (axe) defaults for each sub-agent call: tool calls, turns, tokens of its subtree
# max_tool_calls = 15
# max_turns = 10
# max_tokens = 20000
# (axe) what call_agent returns: "text" (Go's) or "json" (status, result, tokens, files, …)
# result_format = "text"
# (axe) call_agent takes per-call model, tools, system_prompt, read_only, max_tool_calls
# overrides = false
# (axe) spawn_agents: tasks run in parallel by copies of this agent, at most max_spawn per call
# spawn = false
# max_spawn = 16
# (axe) delegate_task: a plan of sub-tasks with dependencies, at most max_subtasks
# delegate = false
# max_subtasks = 5
# (axe) call_agent's run_in_background, collected with task_output
# background = false
# (axe) the agents it calls may ask it a question (ask_parent), at most max_questions each
# ask_parent = false
# max_questions = 3
# (axe) children with the same prompt prefix wait for the first one's answer to begin, to share its prompt cache
# cache_warmup = false
# (axe) call_agent's resume = <agent_id>: an earlier sub-agent's conversation goes on
# resume = false

# (axe) Typed inputs: callers pass them (--input file_path=x, call_agent's inputs);
# \${file_path} in system_prompt takes the value (\${cwd} and \${agent} too)
# [input.file_path]
# type = "string"
# required = true
# description = "File to review"

# (axe) A checked result: the agent ends by calling submit_result with a value
# that matches the schema (or submit_error); stdout is that value as JSON
# [output]
# name = "review"
# description = "The verdict and the findings"
# [output.schema]
# type = "object"
# required = ["verdict"]
# properties = { verdict = { type = "string", enum = ["approve", "reject"] } }

# MCP server connections (optional)
# [[mcp_servers]]
# name = "my-tools"
# url = "https://my-mcp-server.example.com/sse"
# transport = "sse"
# headers = { Authorization = "Bearer \${MY_TOKEN}" }

# (axe) a local MCP server started as a process
# [[mcp_servers]]
# name = "filesystem"
# transport = "stdio"
# command = "npx"
# args = ["-y", "@modelcontextprotocol/server-filesystem", "."]
# env = { LOG_LEVEL = "warn" }

# [memory]
# enabled = false
# path = ""
# last_n = 10
# max_entries = 100

# [params]
# temperature = 0.3
# (axe) nucleus sampling
# top_p = 0.9
# max_tokens = 4096
# (axe) structured answers
# response_format = "json_object"
# (axe) extended thinking (Anthropic, Gemini) and reasoning effort (OpenAI-compatible)
# thinking_budget = 2048
# reasoning_effort = "low"
# (axe) Anthropic/Bedrock prompt caching of the tools, system prompt and conversation
# prompt_caching = true

# [retry]
# max_retries = 0
# backoff = "exponential"
# initial_delay_ms = 500
# max_delay_ms = 30000

# [budget]
# max_tokens = 0
# (axe) this agent's own limits: it stops with its answer so far
# max_tool_calls = 15
# max_turns = 10
# timeout = 300
# as a sub-agent stopped by timeout or max_turns: seconds for one last answer
# grace_period = 30

# [artifacts]
# enabled = false
# dir = ""
# default_write = false
`;
}
