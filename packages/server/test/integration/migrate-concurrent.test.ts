import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { connect, type Database } from '../../src/db/connect.js';
import { ALL_MIGRATIONS, migrateToLatest } from '../../src/db/migrate.js';
import { createEmptyTestDatabase, DIALECTS } from '../helpers/db.js';

// Two processes starting on a new database at once (`svc serve` and `svc token create`, a compose file's services):
// each migration must be applied once, and both starts succeed. Two connections in one process race as two processes
// do: the migrator awaits between its statements, so their steps interleave. Before the SQLite lock, 3 of 5 runs of
// two built commands failed ("duplicate column name: payload", "table svc_meta already exists").
describe.each(DIALECTS)('migrations applied by two connections at once (%s)', (dialect) => {
  it('every run: both succeed, each migration is applied once, and the second waited for the first', async () => {
    for (let round = 0; round < 4; round++) {
      const empty = await createEmptyTestDatabase(dialect);
      const opened: Database[] = await Promise.all([connect(empty.url, { sqliteSynchronous: 'NORMAL' }), connect(empty.url, { sqliteSynchronous: 'NORMAL' })]);
      try {
        const waited: number[] = [];
        const results = await Promise.allSettled(opened.map((d, i) => migrateToLatest(d, () => waited.push(i))));
        expect(results.map((r) => (r.status === 'rejected' ? String(r.reason) : 'ok'))).toEqual(['ok', 'ok']);
        const applied = results.map((r) => (r as PromiseFulfilledResult<string[]>).value);
        // One applied all of them, the other none (it read what was applied once the lock was its own).
        expect(applied.flat().sort()).toEqual([...ALL_MIGRATIONS]);
        if (dialect === 'sqlite') expect(waited).toHaveLength(1);
        const { rows } = await sql<{ name: string }>`select name from svc_migrations order by name`.execute(opened[0]!.db);
        expect(rows.map((r) => r.name)).toEqual([...ALL_MIGRATIONS]);
      } finally {
        for (const d of opened) await d.close();
        await empty.drop();
      }
    }
  }, 120_000);
});
