import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RuntimeError } from '../../internal/errors.js';
import { ENDED_FILE } from '../../internal/record/record.js';
import { RunRecorder } from '../../internal/record/recorder.js';
import { failedBeforeStart } from '../../internal/runner/result.js';
import { addSecret } from '../../internal/secrets.js';
import { tempDirForFile } from '../temp-dir.js';
import { request } from './trace-fixture.js';

describe('ended.json', () => {
  it('cuts a long error after masking it: no part of a secret the cut falls in is written', async () => {
    const secret = 'sk-ended-0123456789abcdefghijklmnopqrstuvwxyz';
    addSecret(secret);
    const runsDir = join(tempDirForFile('axe-ended-'), 'runs');
    const recorder = await RunRecorder.open(runsDir, request, {}, (message) => {
      throw new Error(message);
    });
    if (!recorder) throw new Error('no recorder');
    // The secret starts a little before the 1024 characters ended.json keeps of an error.
    const message = `${'x'.repeat(1010)}${secret} and more after it`;
    const result = failedBeforeStart({ agent: 'lead', path: 'lead', depth: 0 }, 'error', message, 5);
    await recorder.finish({ result, budget: { used: 0 }, error: new RuntimeError(message) }, 1);
    const ended = readFileSync(join(runsDir, recorder.id, ENDED_FILE), 'utf8');
    expect(JSON.parse(ended).error).toBe(`${'x'.repeat(1010)}*** and more after it`.slice(0, 1024));
    expect(ended).not.toContain(secret.slice(0, 8));
  });
});
