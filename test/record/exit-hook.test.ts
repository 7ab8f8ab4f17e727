import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { closeRunRecord, openRunRecord } from '../../internal/record/run-record.js';
import { failedBeforeStart } from '../../internal/runner/result.js';
import { tempDirForFile } from '../temp-dir.js';
import { request } from './trace-fixture.js';

describe('closing run records in a long-lived process', () => {
  it('adds one exit listener for the whole process, however many records it closes', async () => {
    const dir = tempDirForFile('axe-exit-hook-');
    const agentFile = join(dir, 'lead.toml');
    writeFileSync(agentFile, 'model = "anthropic/claude-sonnet-4-5"\n');
    const env = { XDG_DATA_HOME: dir };
    const fail = (message: string) => {
      throw new Error(message);
    };
    const before = process.listenerCount('exit');
    for (let n = 0; n < 20; n++) {
      const record = openRunRecord(async () => ({ providers: {} }), env, { ...request, agentFile }, {}, fail);
      const result = failedBeforeStart({ agent: 'lead', path: 'lead', depth: 0 }, 'error', 'no', 5);
      await closeRunRecord(record, { result, budget: { used: 0 } }, fail);
      expect(await record.recorder.created()).not.toBe('');
    }
    // The recorder's own hook (lines left unwritten at exit) and the exit code's: one each at most.
    expect(process.listenerCount('exit') - before).toBeLessThanOrEqual(2);
  });
});
