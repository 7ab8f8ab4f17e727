import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it, type TestContext } from 'vitest';
import { renderHtmlTrace } from '../../internal/record/html-trace.js';
import { loadRun } from '../../internal/record/store.js';
import { skipBecause } from '../skip.js';
import {
  HOSTILE,
  LEAD,
  type Recorded,
  recordReviewRun,
  recordWideRun,
  SECURITY,
  TESTER,
} from './trace-fixture.js';
import { attributesOf, barStatuses, classesOf } from './trace-html.js';

/**
 * The HTML trace in a real headless Chromium: the DOM after its script ran (`--dump-dom`) and a
 * screenshot. Skipped, with the reason, where no Chromium is installed and none can be.
 */

const run = promisify(execFile);
const ENSURE_CHROMIUM = fileURLToPath(new URL('../../scripts/ensure-chromium.sh', import.meta.url));
const ARTIFACTS = join(tmpdir(), 'axe-test-artifacts', 'html-trace');
let chromium: string | undefined;
let unavailable = '';

beforeAll(async () => {
  await access(ENSURE_CHROMIUM, constants.X_OK);
  try {
    const { stdout } = await run('bash', [ENSURE_CHROMIUM], { timeout: 540_000 });
    chromium = stdout.trim().split('\n').at(-1);
  } catch (error) {
    const { stderr, message } = error as { stderr?: string; message: string };
    unavailable = (stderr?.trim().split('\n').at(-1) || message).trim();
  }
  await mkdir(ARTIFACTS, { recursive: true });
}, 600_000);

function needChromium(ctx: TestContext): string {
  if (chromium === undefined) skipBecause(ctx, `no headless Chromium (${unavailable})`);
  return chromium as string;
}

/** Runs headless Chromium on `url` with a fresh profile; its stdout. */
async function headless(binary: string, args: string[], url: string): Promise<string> {
  const profile = await mkdtemp(join(tmpdir(), 'axe-chromium-'));
  try {
    const flags = [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--user-data-dir=${profile}`,
    ];
    const { stdout } = await run(binary, [...flags, ...args, url], {
      timeout: 60_000,
      maxBuffer: 64 * 2 ** 20,
    });
    return stdout;
  } finally {
    await rm(profile, { recursive: true, force: true });
  }
}

async function writePage(recorded: Recorded, name: string): Promise<string> {
  const file = join(ARTIFACTS, name);
  await writeFile(file, renderHtmlTrace(await loadRun(recorded.runsDir, recorded.id)));
  return file;
}

const dumpDom = (binary: string, url: string) => headless(binary, ['--dump-dom'], url);

describe('the HTML trace in headless Chromium', { timeout: 120_000 }, () => {
  it('runs its script: bars with their outcomes, the top-level transcript open', async (ctx) => {
    const binary = needChromium(ctx);
    const recorded = await recordReviewRun();
    const dom = await dumpDom(binary, pathToFileURL(await writePage(recorded, 'review.html')).href);
    expect(attributesOf(dom, 'html').get('data-ready')).toBe('true');
    expect(barStatuses(dom, 'agent')).toEqual(recorded.agents);
    expect(barStatuses(dom, 'tool')).toEqual(recorded.tools);
    const panel = attributesOf(dom, 'aside', 'panel');
    expect(panel.get('data-path')).toBe(LEAD);
    expect(Number(panel.get('data-entries'))).toBeGreaterThan(10);
    expect(dom).toContain('data-entry="assistant"');
    expect(classesOf(dom, LEAD)).toContain('selected');
  });

  it('an assistant turn that only called tools shows its calls, no text (never "undefined")', async (ctx) => {
    const binary = needChromium(ctx);
    const recorded = await recordReviewRun();
    const page = pathToFileURL(await writePage(recorded, 'tools-only.html')).href;
    const dom = await dumpDom(binary, `${page}#${new URLSearchParams({ agent: SECURITY })}`);
    expect(attributesOf(dom, 'aside', 'panel').get('data-path')).toBe(SECURITY);
    expect(dom).toContain('tool call grep');
    expect(dom).not.toMatch(/>\s*undefined\s*</);
  });

  it('opens the agent the URL names; its untrusted text stays text', async (ctx) => {
    const binary = needChromium(ctx);
    const file = await writePage(await recordReviewRun(), 'review.html');
    const url = `${pathToFileURL(file).href}#${new URLSearchParams({ agent: TESTER })}`;
    const dom = await dumpDom(binary, url);
    expect(attributesOf(dom, 'aside', 'panel').get('data-path')).toBe(TESTER);
    expect(dom).not.toContain('<img');
    expect(dom).toContain('data-entry="warning"');
    const escaped = HOSTILE.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    // The task, the user message, the tool's result and the warning.
    expect(dom.split(escaped).length - 1).toBe(4);
    // The caller's tool call is marked, and the panel links back to it.
    expect(classesOf(dom, LEAD, 'c4')).toContain('linked');
    expect(dom).toContain(
      `href="#${new URLSearchParams({ agent: LEAD, call: 'c4' })}"`.replace(/&/g, '&amp;'),
    );
  });

  it('opens the transcript of a clicked bar', async (ctx) => {
    const binary = needChromium(ctx);
    const page = await readFile(await writePage(await recordReviewRun(), 'review.html'), 'utf8');
    // A second script clicks the security agent's bar; the page's policy is widened to let it run.
    const click = `document.querySelector('.bar[data-kind="agent"][data-path="${SECURITY}"]').click();`;
    const hash = createHash('sha256').update(click).digest('base64');
    const clicked = page
      .replace("script-src 'sha256-", `script-src 'sha256-${hash}' 'sha256-`)
      .replace('</body>', `<script>${click}</script></body>`);
    const file = join(ARTIFACTS, 'review-clicked.html');
    await writeFile(file, clicked);
    const dom = await headless(
      binary,
      ['--dump-dom', '--virtual-time-budget=2000'],
      pathToFileURL(file).href,
    );
    expect(attributesOf(dom, 'aside', 'panel').get('data-path')).toBe(SECURITY);
    expect(classesOf(dom, SECURITY)).toContain('selected');
    expect(classesOf(dom, LEAD)).not.toContain('selected');
    expect(classesOf(dom, LEAD, 'c2')).toContain('linked');
  });

  it('renders 500 agents', async (ctx) => {
    const binary = needChromium(ctx);
    const recorded = await recordWideRun(500);
    const file = await writePage(recorded, 'wide.html');
    const dom = await dumpDom(binary, pathToFileURL(file).href);
    expect(attributesOf(dom, 'html').get('data-ready')).toBe('true');
    expect(barStatuses(dom, 'agent')).toEqual(recorded.agents);
    expect(barStatuses(dom, 'tool')).toEqual(recorded.tools);
    const png = join(ARTIFACTS, 'wide.png');
    await headless(binary, [`--screenshot=${png}`, '--window-size=1400,900'], pathToFileURL(file).href);
    console.log(`HTML trace screenshot (500 agents): ${png}`);
    expect((await stat(png)).size).toBeGreaterThan(20_000);
  });

  it('takes a screenshot', async (ctx) => {
    const binary = needChromium(ctx);
    const file = await writePage(await recordReviewRun(), 'review.html');
    const png = join(ARTIFACTS, 'review.png');
    await rm(png, { force: true });
    await headless(binary, [`--screenshot=${png}`, '--window-size=1400,900'], pathToFileURL(file).href);
    console.log(`HTML trace screenshot: ${png}`);
    const bytes = await readFile(png);
    expect(bytes.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
    expect(bytes.length).toBeGreaterThan(20_000);
  });
});
