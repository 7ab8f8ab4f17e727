import { createHash } from 'node:crypto';
import { addUsage, emptyUsage, type Usage } from '../provider/types.js';
import { sumCosts } from '../runner/result.js';
import { TRACE_CSS, TRACE_JS } from './html-trace-client.js';
import {
  type BarStatus,
  formatCost,
  formatMs,
  formatTokens,
  type TraceAgent,
  type TraceModel,
  type TraceTool,
  traceModel,
} from './html-trace-model.js';
import { panelData } from './html-trace-panel.js';
import { type LoadedRun, shownStatus } from './store.js';

/**
 * A run's record as one self-contained HTML page (`axe runs show <id> --html`): a header, the
 * timeline of the agent tree (a bar per agent, its tool calls in lanes under it), and a panel
 * with the transcript of the bar clicked. The bars are built here, so the timeline reads without
 * script; the panel is built by the inlined script from the JSON embedded in the page. No
 * network: the page's Content-Security-Policy allows only its own inline style and script.
 */
export function renderHtmlTrace(run: LoadedRun): string {
  const model = traceModel(run);
  const { record } = run;
  const data = { agents: panelData(model, run.transcripts) };
  const scriptHash = createHash('sha256').update(TRACE_JS).digest('base64');
  const csp = `default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-${scriptHash}'; base-uri 'none'; form-action 'none'`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>axe run ${esc(record.id)} · ${esc(record.request.agent)}</title>
<style>${TRACE_CSS}</style>
</head>
<body>
${header(run, model)}
<main>
<section id="timeline" aria-label="timeline" style="--tick:${pct(tickStep(model) / span(model))}">
${axis(model)}
${model.agents.map((agent) => row(agent, model)).join('\n')}
</section>
<aside id="panel" aria-live="polite"><p>Click a bar to read its transcript.</p></aside>
</main>
<script type="application/json" id="trace-data">${jsonForScript(data)}</script>
<script>${TRACE_JS}</script>
</body>
</html>
`;
}

const STATUSES: BarStatus[] = [
  'completed',
  'error',
  'timeout',
  'cancelled',
  'budget_exceeded',
  'max_turns',
  'running',
  'interrupted',
];

function header(run: LoadedRun, model: TraceModel): string {
  const { record } = run;
  const status: BarStatus = shownStatus(record);
  const usage = record.usage ?? sumUsage(model);
  const cost = record.cost ?? sumCost(model);
  const tools = model.agents.reduce((n, a) => n + a.tools.length, 0);
  const facts: [string, string][] = [
    ['agent', record.request.agent],
    ['exit code', record.exitCode === undefined ? '–' : String(record.exitCode)],
    ['started', record.startedAt],
    ['duration', formatMs(record.durationMs ?? span(model))],
    ['tokens', formatTokens(usage)],
    ['cost', formatCost(cost) || '–'],
    ['agents', String(model.agents.length)],
    ['tool calls', String(tools)],
  ];
  return `<header class="run" id="run" data-status="${esc(status)}">
<h1>axe run <code>${esc(record.id)}</code> <span class="badge" data-status="${esc(status)}">${esc(status)}</span></h1>
<dl>${facts.map(([k, v]) => `<div><dt>${k}</dt><dd>${esc(v)}</dd></div>`).join('')}</dl>
${record.error ? `<p class="run-error">${esc(record.error)}</p>` : ''}
<div class="legend">${STATUSES.map((s) => `<span data-status="${s}">${s.replace('_', ' ')}</span>`).join('')}</div>
</header>`;
}

function axis(model: TraceModel): string {
  const step = tickStep(model);
  const ticks: string[] = [];
  for (let t = 0; t <= span(model); t += step) {
    ticks.push(`<span style="left:${pct(t / span(model))}">${formatMs(t)}</span>`);
  }
  return `<div class="axis"><div></div><div class="ticks">${ticks.join('')}</div></div>`;
}

function row(agent: TraceAgent, model: TraceModel): string {
  const { node } = agent;
  const path = esc(node.path);
  const where = (start: number, end: number) =>
    `left:${pct((start - model.t0) / span(model))};width:${pct(Math.max(0, end - start) / span(model))}`;
  const tokens = node.usage.inputTokens + node.usage.outputTokens;
  const facts = [
    agent.status.replace('_', ' '),
    formatMs(agent.end - agent.start),
    `${tokens.toLocaleString('en-US')} tokens`,
    formatCost(node.cost),
  ].filter(Boolean);
  const via = agent.via ? ` via ${agent.via.name}` : '';
  const callId = node.callId !== undefined ? ` data-call-id="${esc(node.callId)}"` : '';
  const title = `${node.agent} — ${facts.join(' · ')}${via}\n${formatTokens(node.usage)}\n${node.path}${node.error ? `\n${node.error}` : ''}`;
  const bar = `<div class="bar agent" data-kind="agent" data-path="${path}" data-status="${esc(agent.status)}"${callId} tabindex="0" title="${esc(title)}" style="${where(agent.start, agent.end)}">${esc(node.agent)}</div>`;
  const tools = agent.tools.map((tool) => toolBar(agent, tool, where(tool.start, tool.end)));
  return `<div class="row" data-path="${path}" style="--depth:${Number(node.depth) || 0};--lanes:${agent.lanes}">
<div class="label" title="${path}">${esc(node.agent)}<span class="meta">${esc(facts.join(' · ') + via)}</span></div>
<div class="track">${bar}${tools.join('')}</div>
</div>`;
}

function toolBar(agent: TraceAgent, tool: TraceTool, where: string): string {
  const children = tool.children.length > 0 ? ` data-children="${tool.children.length}"` : '';
  const started = tool.children.map((path) => `\nstarted ${path}`).join('');
  const title = `${tool.name} — ${tool.status} · ${formatMs(tool.end - tool.start)}${started}`;
  return `<div class="bar tool" data-kind="tool" data-path="${esc(agent.node.path)}" data-call-id="${esc(tool.callId)}" data-status="${esc(tool.status)}"${children} tabindex="-1" title="${esc(title)}" style="${where};--lane:${tool.lane}"></div>`;
}

function span(model: TraceModel): number {
  return model.t1 - model.t0;
}

/** About eight gridlines: 1, 2 or 5 times a power of ten milliseconds. */
function tickStep(model: TraceModel): number {
  const rough = span(model) / 8;
  const power = 10 ** Math.floor(Math.log10(rough));
  return [1, 2, 5, 10].map((m) => m * power).find((step) => step >= rough) ?? 10 * power;
}

function pct(fraction: number): string {
  return `${(fraction * 100).toFixed(3)}%`;
}

function sumUsage(model: TraceModel): Usage {
  return model.agents.reduce((sum, { node }) => addUsage(sum, node.usage), emptyUsage());
}

function sumCost(model: TraceModel): number | undefined {
  return sumCosts(model.agents.map(({ node }) => node.cost));
}

function esc(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}

/** JSON that cannot end its `<script>` block or open a comment: every `<` escaped. */
function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}
