import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { Tables } from '../../src/db/tables.js';

/** Rows a PostgreSQL plan's nodes produced, read or threw away, over all their loops: the statement's work. */
export function rowsTouched(node: Record<string, unknown>): number {
  const loops = Number(node['Actual Loops'] ?? 1);
  const own = (Number(node['Actual Rows'] ?? 0) + Number(node['Rows Removed by Filter'] ?? 0) + Number(node['Rows Removed by Join Filter'] ?? 0)) * loops;
  const children = (node['Plans'] as Array<Record<string, unknown>> | undefined) ?? [];
  return own + children.reduce((sum, child) => sum + rowsTouched(child), 0);
}

/** The rows a statement touches when run (EXPLAIN ANALYZE, PostgreSQL), in a transaction rolled back after. */
export async function statementWork(db: Kysely<Tables>, q: CompiledQuery): Promise<number> {
  return db.connection().execute(async (c) => {
    await sql`begin`.execute(c);
    try {
      const { rows } = await c.executeQuery(CompiledQuery.raw<{ 'QUERY PLAN': Array<{ Plan: Record<string, unknown> }> }>(`explain (analyze, format json) ${q.sql}`, [...q.parameters]));
      return rowsTouched(rows[0]!['QUERY PLAN'][0]!.Plan);
    } finally {
      await sql`rollback`.execute(c);
    }
  });
}
