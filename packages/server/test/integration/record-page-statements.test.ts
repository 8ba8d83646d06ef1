import { sql, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import type { Tables } from '../../src/db/tables.js';
import { recordPageJson } from '../../src/records/record-page.js';
import { insertRecords, listRecordPage } from '../../src/records/records-store.js';
import { DIALECTS } from '../helpers/db.js';
import { createTestContext, type TestContext } from '../helpers/context.js';

/**
 * A plain page (no filter, no sort) is W1's hot path: one statement reads its rows with their sizes and the data of
 * every row small enough to hold limit + 1 of them within SVC_LIST_MAX_BYTES. Only a page with a larger record reads
 * again, by id range, the rows that fit: what a page holds in memory stays bounded by the limit either way.
 */
describe.each(DIALECTS)('a plain page of records (%s)', (dialect) => {
  let t: TestContext | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  /** The database's Kysely, counting the statements run through it. */
  function counted(db: Kysely<Tables>): { db: Kysely<Tables>; statements: () => number } {
    let n = 0;
    const proxy = new Proxy(db, {
      get(target, key, receiver) {
        if (key === 'executeQuery') {
          return (...args: Parameters<Kysely<Tables>['executeQuery']>) => {
            n++;
            return target.executeQuery(...args);
          };
        }
        const value = Reflect.get(target, key, receiver) as unknown;
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    return { db: proxy, statements: () => n };
  }

  const record = (i: number, body: string) => ({ id: `rec_${String(i).padStart(26, '0')}`, collection: 'docs', version: 1, data: { body }, createdAt: 1_700_000_000_000 + i, updatedAt: 1_700_000_000_000 + i });

  it('of small records is one statement, and its JSON is every record as stored', async () => {
    t = await createTestContext(dialect);
    const { db, caps } = t.ctx.database;
    await sql`insert into collections (name, fields, created_at, updated_at) values ('docs', '[]', 0, 0)`.execute(db);
    await insertRecords(db, Array.from({ length: 7 }, (_, i) => record(i, `small ${i}`)));
    const c = counted(db);
    const page = JSON.parse((await recordPageJson(c.db, caps, 'docs', null, 5, 4 * 1024 * 1024)).toString()) as { items: Array<{ id: string; data: unknown; createdAt: string }>; nextCursor: string | null };
    expect(c.statements()).toBe(1);
    expect(page.items.map((r) => r.id)).toEqual([0, 1, 2, 3, 4].map((i) => record(i, '').id));
    expect(page.items[2]).toEqual({ id: record(2, '').id, collection: 'docs', version: 1, createdAt: new Date(1_700_000_000_002).toISOString(), updatedAt: new Date(1_700_000_000_002).toISOString(), data: { body: 'small 2' } });
    expect(page.nextCursor).not.toBeNull();
  });

  it('with a record above maxBytes / (limit + 1) reads none of its data in the first statement, then the range that fits', async () => {
    t = await createTestContext(dialect);
    const { db, caps } = t.ctx.database;
    await sql`insert into collections (name, fields, created_at, updated_at) values ('docs', '[]', 0, 0)`.execute(db);
    const big = 'b'.repeat(50_000);
    await insertRecords(db, [record(0, 'a'), record(1, big), record(2, 'c')]);
    // limit 5, 120,000 bytes: 20,000 a row inline at most.
    const rows = await listRecordPage(db, caps, 'docs', null, 6, 120_000 / 6);
    expect(rows.map((r) => [r[0], Number(r[4]) > 50_000, r[5] === null])).toEqual([
      [record(0, '').id, false, false],
      [record(1, '').id, true, true],
      [record(2, '').id, false, false],
    ]);
    const c = counted(db);
    const page = JSON.parse((await recordPageJson(c.db, caps, 'docs', null, 5, 120_000)).toString()) as { items: Array<{ data: { body: string } }>; nextCursor: string | null };
    expect(c.statements()).toBe(2);
    expect(page.items.map((r) => r.data.body.length)).toEqual([1, 50_000, 1]);
    expect(page.nextCursor).toBeNull();
  });
});
