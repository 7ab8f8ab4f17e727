import { describe, expect, it } from 'vitest';
import { jobId } from '../../internal/queue/protocol.js';
import { parseQueueUrl, queueUrlFrom } from '../../internal/queue/url.js';

describe('the queue URL', () => {
  it('is shown with its password and secret parameters masked', () => {
    const url = parseQueueUrl(
      'postgres://axe:hunter2hunter2@db.example:6543/jobs?sslpassword=abc&application_name=x',
      '--queue',
    );
    expect(url.masked).toBe('postgres://axe:***@db.example:6543/jobs?sslpassword=***&application_name=x');
    expect(url.host).toBe('db.example:6543');
    expect(url.url).toContain('hunter2hunter2');
  });

  it("names PostgreSQL's default port when the URL has none", () => {
    expect(parseQueueUrl('postgresql://db.example/jobs', 'AXE_QUEUE').host).toBe('db.example:5432');
  });

  it('refuses what is not a PostgreSQL URL, naming where it came from (exit 2), without its password', () => {
    const refused = (text: string, source: '--queue' | 'AXE_QUEUE') => {
      try {
        parseQueueUrl(text, source);
      } catch (error) {
        return { message: (error as Error).message, exitCode: (error as { exitCode: number }).exitCode };
      }
      throw new Error(`accepted ${text}`);
    };
    expect(refused('mysql://u:pw@h/db', '--queue')).toEqual({
      message: '--queue: expected a postgres:// or postgresql:// URL, got a mysql:// one',
      exitCode: 2,
    });
    const bad = refused('not a url:secretpass@', 'AXE_QUEUE');
    expect(bad.exitCode).toBe(2);
    expect(bad.message).toMatch(/^AXE_QUEUE: expected a PostgreSQL URL/);
    expect(bad.message).not.toContain('secretpass');
    expect(refused('postgres:///db', '--queue').message).toBe(
      '--queue: the URL names no host (postgres://user@host:5432/db)',
    );
  });

  it('takes --queue over AXE_QUEUE, and neither is no queue', () => {
    const env = { AXE_QUEUE: 'postgres://env-host/db' };
    expect(queueUrlFrom('postgres://flag-host/db', env)?.host).toBe('flag-host:5432');
    expect(queueUrlFrom(undefined, env)?.host).toBe('env-host:5432');
    expect(queueUrlFrom(undefined, {})).toBeUndefined();
  });
});

describe("an item's job id", () => {
  it('is the same for one item of one generation, a UUID PostgreSQL takes, and differs otherwise', () => {
    const id = jobId('20261202-070000.000-abcdef', 7, 0);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(jobId('20261202-070000.000-abcdef', 7, 0)).toBe(id);
    expect(jobId('20261202-070000.000-abcdef', 7, 1)).not.toBe(id);
    expect(jobId('20261202-070000.000-abcdef', 8, 0)).not.toBe(id);
  });
});
