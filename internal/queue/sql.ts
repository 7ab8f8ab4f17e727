/**
 * What the worker's statements run on: the queue's pool, or one client inside a transaction.
 * Both `pg.Pool` and `pg.PoolClient` are one.
 */
export interface Sql {
  query<Row extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: Row[]; rowCount: number | null }>;
}

/** pg-boss's connection option for a call that must run on `sql` (inside our transaction). */
export function bossOn(sql: Sql): {
  db: { executeSql: (text: string, values: unknown[]) => Promise<{ rows: unknown[] }> };
} {
  return { db: { executeSql: (text, values) => sql.query(text, values) } };
}
