import { expect, it } from 'vitest';
import { skipBecause } from '../skip.js';
import { startPrivatePostgres, testDatabase } from './index.js';
import { query } from './server.js';

// The helpers every queue test stands on: a database of the file's own, and a server that a test
// stops and starts again with its data where it was.

it('gives each call a fresh, empty database of its own', async (context) => {
  const first = await testDatabase('fresh');
  if (typeof first === 'string') return skipBecause(context, first);
  const second = await testDatabase('fresh');
  if (typeof second === 'string') return skipBecause(context, second);
  expect(first.url).not.toBe(second.url);
  await query(first.url, 'CREATE TABLE t (n int)');
  await query(first.url, 'INSERT INTO t VALUES (1)');
  const tables = await query(
    second.url,
    "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'",
  );
  expect(tables.rows[0].n).toBe(0);
  expect((await query(first.url, 'SELECT n FROM t')).rows).toEqual([{ n: 1 }]);
});

it('stops a private server and starts it again on the same port with its data', async (context) => {
  const server = await startPrivatePostgres();
  if (typeof server === 'string') return skipBecause(context, server);
  const url = await server.database('restart');
  await query(url, 'CREATE TABLE t (n int)');
  await query(url, 'INSERT INTO t VALUES (42)');
  await server.stop();
  await expect(query(url, 'SELECT 1')).rejects.toThrow(/ECONNREFUSED/);
  await server.start();
  expect((await query(url, 'SELECT n FROM t')).rows).toEqual([{ n: 42 }]);
  expect(new URL(url).port).toBe(String(server.port));
});
