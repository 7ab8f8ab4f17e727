import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderHtmlTrace } from '../../internal/record/html-trace.js';
import type { PanelAgent } from '../../internal/record/html-trace-panel.js';
import type { RunRecord } from '../../internal/record/record.js';
import { loadRun } from '../../internal/record/store.js';
import {
  DOCS,
  HOSTILE,
  HOSTILE_AGENT,
  LEAD,
  recordReviewRun,
  recordUnfinishedRun,
  recordWideRun,
  SECURITY,
  TESTER,
} from './trace-fixture.js';
import { attributesOf, barStatuses, bars, scriptText } from './trace-html.js';

async function rendered(recorded: { runsDir: string; id: string }): Promise<string> {
  return renderHtmlTrace(await loadRun(recorded.runsDir, recorded.id));
}

function panelData(html: string): PanelAgent[] {
  return (
    JSON.parse(scriptText(html, /<script type="application\/json" id="trace-data"/)) as {
      agents: PanelAgent[];
    }
  ).agents;
}

describe('renderHtmlTrace', () => {
  it('draws one bar per agent and per tool call, with its outcome', async () => {
    const run = await recordReviewRun();
    const html = await rendered(run);
    expect(barStatuses(html, 'agent')).toEqual(run.agents);
    expect(barStatuses(html, 'tool')).toEqual(run.tools);
    expect(bars(html).map((b) => b.attrs.get('data-path'))).toEqual(
      expect.arrayContaining([LEAD, SECURITY, TESTER, DOCS]),
    );
    // Callers first, then each sub-agent in the order it started.
    const agentOrder = bars(html)
      .filter((b) => b.kind === 'agent')
      .map((b) => b.attrs.get('data-path'));
    expect(agentOrder[0]).toBe(LEAD);
  });

  it('links each sub-agent to the tool call that started it', async () => {
    const html = await rendered(await recordReviewRun());
    const security = bars(html).find((b) => b.kind === 'agent' && b.attrs.get('data-path') === SECURITY);
    expect(security?.attrs.get('data-call-id')).toBe('c2');
    const c2 = bars(html).find((b) => b.kind === 'tool' && b.attrs.get('data-call-id') === 'c2');
    expect(c2?.attrs.get('data-children')).toBe('1');
    expect(c2?.attrs.get('title')).toContain(`started ${SECURITY}`);
    const docs = panelData(html).find((a) => a.path === DOCS);
    expect(docs?.caller).toEqual({ path: LEAD, callId: 'c5', name: 'call_agent' });
    const lead = panelData(html).find((a) => a.path === LEAD);
    const calls = lead?.entries.flatMap((e) => (e.kind === 'assistant' ? e.calls : []));
    expect(calls?.find((c) => c.callId === 'c4')?.children).toEqual([TESTER]);
  });

  it('places bars by time from the run start', async () => {
    const html = await rendered(await recordReviewRun());
    const style = (path: string, callId?: string) =>
      bars(html)
        .find(
          (b) =>
            b.attrs.get('data-path') === path &&
            (callId ? b.attrs.get('data-call-id') === callId && b.kind === 'tool' : b.kind === 'agent'),
        )
        ?.attrs.get('style') ?? '';
    const left = (s: string) => Number(/left:([\d.]+)%/.exec(s)?.[1]);
    const width = (s: string) => Number(/width:([\d.]+)%/.exec(s)?.[1]);
    expect(left(style(LEAD))).toBeLessThan(0.5);
    // The docs agent starts at 5.44 s of an 8.6 s run and ends at 8 s.
    expect(left(style(DOCS))).toBeCloseTo(63.3, 0);
    expect(width(style(DOCS))).toBeCloseTo(29.8, 0);
    expect(left(style(LEAD, 'c6'))).toBeGreaterThan(left(style(LEAD, 'c5')));
  });

  it('heads the page with the run: id, agent, status, exit code, duration, tokens, cost', async () => {
    const run = await recordReviewRun();
    const html = await rendered(run);
    const header = html.slice(html.indexOf('<header'), html.indexOf('</header>'));
    expect(header).toContain(run.id);
    expect(header).toContain('data-status="completed"');
    for (const fact of [
      '<dt>agent</dt><dd>lead</dd>',
      '<dt>exit code</dt><dd>0</dd>',
      '<dt>duration</dt><dd>8.6 s</dd>',
    ])
      expect(header).toContain(fact);
    expect(header).toMatch(/<dt>tokens<\/dt><dd>5,100 tokens \(4,500 in, 600 out\)<\/dd>/);
    expect(header).toMatch(/<dt>cost<\/dt><dd>\$\d\.\d{4}<\/dd>/);
  });

  it('is self-contained: no network, only its own script may run', async () => {
    const html = await rendered(await recordReviewRun());
    expect(html).not.toMatch(/https?:\/\//);
    expect(html).not.toMatch(/<(link|img|iframe|object|embed)\b/i);
    expect(html).not.toMatch(/<script[^>]*\bsrc=/i);
    expect(html).not.toMatch(/url\(/);
    const script = scriptText(html, /<script>/);
    const hash = createHash('sha256').update(script).digest('base64');
    const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)?.[1];
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain(`script-src 'sha256-${hash}'`);
  });

  it('leaves untrusted names, tasks and outputs inert', async () => {
    const html = await rendered(await recordReviewRun());
    expect(html.match(/<\/script/g)).toHaveLength(2);
    expect(html).not.toContain('<img');
    expect(html).not.toContain(HOSTILE_AGENT);
    // Escaped in the markup, intact in the data.
    expect(html).toContain('tester&quot;&gt;&lt;img src=x onerror=alert(2)&gt;');
    const tester = panelData(html).find((a) => a.path === TESTER);
    expect(tester?.agent).toBe(HOSTILE_AGENT);
    expect(tester?.task).toBe(HOSTILE);
    expect(tester?.entries).toContainEqual(
      expect.objectContaining({ kind: 'result', text: HOSTILE, error: true }),
    );
    expect(tester?.entries).toContainEqual(
      expect.objectContaining({ kind: 'warning', text: `tool output ${HOSTILE}` }),
    );
  });

  it('shows a run still going as running, its open tool call up to now', async () => {
    const run = await recordUnfinishedRun();
    const html = await rendered(run);
    expect(barStatuses(html, 'agent')).toEqual(new Map([[LEAD, 'running']]));
    expect(barStatuses(html, 'tool')).toEqual(new Map([[`${LEAD}\nc1`, 'running']]));
    expect(attributesOf(html, 'header', 'run').get('data-status')).toBe('running');
  });

  it('shows what never ended in a run whose process is gone as interrupted', async () => {
    const run = await recordUnfinishedRun();
    const file = join(run.runsDir, run.id, 'run.json');
    const record = JSON.parse(await readFile(file, 'utf8')) as RunRecord;
    await writeFile(file, JSON.stringify({ ...record, pid: spawnSync(process.execPath, ['-e', '']).pid }));
    const html = await rendered(run);
    expect(barStatuses(html, 'agent')).toEqual(new Map([[LEAD, 'interrupted']]));
    expect(barStatuses(html, 'tool')).toEqual(new Map([[`${LEAD}\nc1`, 'interrupted']]));
    expect(attributesOf(html, 'header', 'run').get('data-status')).toBe('interrupted');
  });

  it('draws 500 agents', async () => {
    const run = await recordWideRun(500);
    const html = await rendered(run);
    expect(barStatuses(html, 'agent')).toEqual(run.agents);
    expect(barStatuses(html, 'tool')).toEqual(run.tools);
    expect(run.agents.size).toBe(500);
    const spawn = bars(html).find((b) => b.attrs.get('data-call-id') === 'spawn' && b.kind === 'tool');
    expect(spawn?.attrs.get('data-children')).toBe('499');
  });
});
