/**
 * The HTML trace's stylesheet and script, inlined in the page. The script reads the panel data
 * (`PanelAgent[]` in the `#trace-data` JSON block), opens the transcript of the agent named in
 * the URL's hash (`#agent=<path>&call=<callId>`, else the top-level agent), and turns a click or
 * Enter on a bar into that hash: one delegated listener for the whole timeline. Text goes in
 * through `textContent` only.
 */

export const TRACE_CSS = `
:root { --label: 260px; font: 13px/1.4 system-ui, sans-serif; color: #1d2330; background: #fafbfc; }
body { margin: 0; }
code, pre { font: 12px/1.4 ui-monospace, "DejaVu Sans Mono", monospace; }
header.run { padding: 12px 16px; border-bottom: 1px solid #d8dde6; background: #fff; }
header.run h1 { font-size: 16px; margin: 0 0 6px; }
header.run dl { display: flex; flex-wrap: wrap; gap: 4px 18px; margin: 0; }
header.run dt { color: #5c6577; } header.run dd { margin: 0 0 0 4px; font-weight: 600; }
header.run div { display: flex; }
.run-error { color: #b42318; margin: 6px 0 0; white-space: pre-wrap; }
.legend { display: flex; gap: 12px; margin-top: 8px; color: #5c6577; font-size: 12px; }
.legend span::before { content: ""; display: inline-block; width: 10px; height: 10px; margin-right: 4px; border-radius: 2px; background: var(--c); vertical-align: -1px; }
main { display: flex; align-items: flex-start; }
#timeline { flex: 1 1 60%; min-width: 0; padding: 8px 0 24px; }
#panel { flex: 0 0 40%; box-sizing: border-box; max-width: 40%; height: calc(100vh - 16px); position: sticky; top: 8px; overflow: auto; padding: 8px 16px; border-left: 1px solid #d8dde6; background: #fff; }
.axis, .row { display: grid; grid-template-columns: var(--label) 1fr; }
.axis .ticks { position: relative; height: 18px; color: #5c6577; font-size: 11px; }
.axis .ticks span { position: absolute; transform: translateX(-50%); white-space: nowrap; }
.row:hover { background: #f0f3f8; }
.label { padding: 2px 8px 2px calc(8px + var(--depth) * 14px); overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
.label .meta { display: block; color: #5c6577; font-size: 11px; overflow: hidden; text-overflow: ellipsis; }
.track { position: relative; height: calc(22px + var(--lanes) * 9px + 6px); margin-right: 12px;
  background-image: linear-gradient(to right, #e3e7ee 1px, transparent 1px); background-size: var(--tick) 100%; }
.bar { position: absolute; box-sizing: border-box; min-width: 2px; border-radius: 3px; cursor: pointer; overflow: hidden; white-space: nowrap; color: #fff; }
.bar.agent { top: 3px; height: 18px; padding: 0 4px; font-size: 11px; line-height: 18px; background: var(--c); }
.bar.tool { height: 7px; top: calc(24px + var(--lane) * 9px); background: #7b879c; }
.bar.tool[data-children] { background: #39465c; }
.bar.tool[data-status="error"] { background: #d64545; }
.bar:focus-visible, .bar.selected { outline: 2px solid #1d2330; outline-offset: 1px; z-index: 1; }
.bar.linked { outline: 2px dashed #1d2330; outline-offset: 1px; z-index: 1; }
[data-status="completed"] { --c: #2e9d5b; } [data-status="error"] { --c: #d64545; }
[data-status="timeout"] { --c: #e08a1e; } [data-status="cancelled"] { --c: #8a8f98; }
[data-status="budget_exceeded"] { --c: #8e5bb5; } [data-status="max_turns"] { --c: #b8941c; }
[data-status="running"], [data-status="interrupted"] { --c: #4a90d9; }
.bar[data-status="running"], .bar[data-status="interrupted"] { background-image: repeating-linear-gradient(45deg, transparent 0 6px, rgba(255,255,255,.3) 6px 12px); }
.badge { display: inline-block; padding: 0 6px; border-radius: 9px; color: #fff; background: var(--c); font-size: 11px; font-weight: 600; }
#panel h2 { font-size: 15px; margin: 4px 0; }
#panel .facts { margin: 4px 0; padding: 0; list-style: none; color: #5c6577; }
#panel pre { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 24em; overflow: auto; margin: 4px 0; padding: 6px 8px; background: #f4f6f9; border-radius: 4px; }
.entries { list-style: none; margin: 8px 0; padding: 0; }
.entry { margin: 8px 0; padding-left: 8px; border-left: 3px solid #c3cad6; }
.entry .head { color: #5c6577; font-size: 11px; font-weight: 600; text-transform: uppercase; }
.entry[data-entry="user"] { border-color: #4a90d9; } .entry[data-entry="assistant"] { border-color: #2e9d5b; }
.entry[data-entry="warning"], .entry[data-entry="retry"] { border-color: #e08a1e; }
.entry.error, .entry[data-entry="end"].error { border-color: #d64545; }
.call { margin: 4px 0; } .call.focus, .entry.focus { background: #fff4d6; }
`;

export const TRACE_JS = `(() => {
  'use strict';
  const data = JSON.parse(document.getElementById('trace-data').textContent);
  const agents = new Map(data.agents.map((a) => [a.path, a]));
  const panel = document.getElementById('panel');
  const timeline = document.getElementById('timeline');
  const agentBars = new Map();
  const toolBars = new Map();
  for (const bar of timeline.querySelectorAll('.bar')) {
    if (bar.dataset.kind === 'agent') agentBars.set(bar.dataset.path, bar);
    else toolBars.set(bar.dataset.path + '\\n' + bar.dataset.callId, bar);
  }

  const el = (tag, attrs, ...children) => {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value !== undefined && value !== false) node.setAttribute(key, value === true ? '' : value);
    }
    for (const child of children) if (child !== undefined) node.append(child);
    return node;
  };
  const link = (path, callId, text) => {
    const params = new URLSearchParams({ agent: path });
    if (callId) params.set('call', callId);
    return el('a', { href: '#' + params }, text);
  };
  const head = (entry, title) => el('div', { class: 'head' }, title + ' · ' + entry.at);
  // No text (a turn that only called tools): nothing. (An element's append() would print undefined.)
  const pre = (text) => (text ? el('pre', {}, text) : '');

  function entryNode(entry) {
    const li = el('li', { class: 'entry', 'data-entry': entry.kind });
    switch (entry.kind) {
      case 'system': {
        const summary = el('summary', {}, 'system prompt · ' + entry.tools.length + ' tools: ' + entry.tools.join(', '));
        li.append(head(entry, 'ready'), el('details', {}, summary, pre(entry.text)));
        break;
      }
      case 'assistant':
        li.append(head(entry, 'assistant'), pre(entry.text));
        for (const call of entry.calls) {
          const title = el('div', {}, el('b', {}, 'tool call ' + call.name), ' ', el('code', {}, call.callId));
          for (const child of call.children) title.append(' → ', link(child, '', 'sub-agent ' + agents.get(child).agent));
          li.append(el('div', { class: 'call', 'data-call-id': call.callId }, title, pre(call.input)));
        }
        break;
      case 'result':
        li.dataset.callId = entry.callId;
        if (entry.error) li.classList.add('error');
        li.append(head(entry, 'result of ' + entry.name + (entry.error ? ' (error)' : '')), pre(entry.text));
        break;
      case 'end':
        if (!entry.text.startsWith('completed')) li.classList.add('error');
        li.append(head(entry, 'ended'), el('div', {}, entry.text));
        break;
      default:
        li.append(head(entry, entry.kind), pre(entry.text));
    }
    return li;
  }

  function open(path, callId) {
    const agent = agents.get(path) || data.agents[0];
    if (!agent) return;
    for (const bar of timeline.querySelectorAll('.selected, .linked')) bar.classList.remove('selected', 'linked');
    const bar = agentBars.get(agent.path);
    if (bar) bar.classList.add('selected');
    const callBar = callId ? toolBars.get(agent.path + '\\n' + callId) : undefined;
    if (callBar) callBar.classList.add('linked');
    if (agent.caller) toolBars.get(agent.caller.path + '\\n' + agent.caller.callId)?.classList.add('linked');

    const caller = agent.caller
      ? el('p', {}, 'started by ', link(agent.caller.path, agent.caller.callId, agent.caller.name + ' ' + agent.caller.callId),
          ' in ' + agents.get(agent.caller.path).agent)
      : undefined;
    const title = el('h2', {}, agent.agent + ' ', el('span', { class: 'badge', 'data-status': agent.status }, agent.status));
    const facts = el('ul', { class: 'facts' }, ...agent.facts.map((fact) => el('li', {}, fact)));
    const task = agent.task ? el('details', {}, el('summary', {}, 'task'), pre(agent.task)) : undefined;
    const error = agent.error ? el('pre', { class: 'run-error' }, agent.error) : undefined;
    const entries = el('ol', { class: 'entries' }, ...agent.entries.map(entryNode));
    const parts = [title, el('code', {}, agent.path), facts, caller, task, error, entries];
    panel.replaceChildren(...parts.filter((part) => part !== undefined));
    panel.dataset.path = agent.path;
    panel.dataset.entries = String(agent.entries.length);
    panel.scrollTop = 0;
    if (callId) {
      const focus = [...entries.querySelectorAll('[data-call-id]')].filter((n) => n.dataset.callId === callId);
      for (const node of focus) node.classList.add('focus');
      focus[0]?.scrollIntoView({ block: 'center' });
    }
  }

  function fromHash() {
    const params = new URLSearchParams(location.hash.slice(1));
    open(params.get('agent') || '', params.get('call') || '');
  }

  function choose(bar) {
    const params = new URLSearchParams({ agent: bar.dataset.path });
    if (bar.dataset.kind === 'tool') params.set('call', bar.dataset.callId);
    location.hash = '#' + params;
  }
  timeline.addEventListener('click', (event) => {
    const bar = event.target.closest('.bar');
    if (bar) choose(bar);
  });
  timeline.addEventListener('keydown', (event) => {
    const bar = event.target.closest('.bar');
    if (bar && (event.key === 'Enter' || event.key === ' ')) {
      event.preventDefault();
      choose(bar);
    }
  });
  window.addEventListener('hashchange', fromHash);
  fromHash();
  document.documentElement.dataset.ready = 'true';
})();
`;
