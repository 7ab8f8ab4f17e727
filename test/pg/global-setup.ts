import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { stopPostgresIn } from './server.js';

/**
 * Makes the directory where this test run's PostgreSQL servers live (test/pg/index.ts starts them
 * only when a test file asks for one) and, at the end, stops every server in it and removes it,
 * whatever the outcome of the tests.
 */
export default function setup(project: TestProject): () => Promise<void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'axe-test-pg-'));
  // As root the servers run as the postgres user, who must reach their directories in here.
  chmodSync(dir, 0o711);
  project.provide('axePgRunDir', dir);
  return async () => {
    for (const entry of readdirSync(dir)) {
      const server = path.join(dir, entry);
      if (existsSync(path.join(server, 'data', 'postmaster.pid')))
        await stopPostgresIn(server).catch(() => {});
    }
    rmSync(dir, { recursive: true, force: true });
  };
}
