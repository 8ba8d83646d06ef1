import { afterEach, describe, expect, it } from 'vitest';
import type { Context } from '../../src/context.js';
import { AppError } from '../../src/errors.js';
import { removeCollection } from '../../src/records/collections.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';
import { StatementLog } from '../helpers/statement-log.js';

/**
 * A delete without `force` of a collection that holds records is refused (409) before anything is deleted: it used to
 * count every record and cascade the delete to all of them, then roll it all back, holding the write lock (on SQLite
 * the event loop) as long as deleting them would have.
 */
describe.each(DIALECTS)('a delete of a collection that holds records, without force (%s)', (dialect) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('is refused with conflict, and its transaction neither deletes nor counts', async () => {
    t = await createTestApp(dialect);
    await t.collection('issues', [{ name: 'title', type: 'text', required: true }]);
    const token = await t.token();
    for (let i = 0; i < 3; i++) {
      const res = await t.app.inject({ method: 'POST', url: '/api/v1/collections/issues/records', headers: { authorization: `Bearer ${token}` }, payload: { data: { title: `r${i}` } } });
      expect(res.statusCode).toBe(201);
    }
    const log = new StatementLog();
    const logged = t.ctx.database.db.withPlugin(log);
    const ctx: Context = { ...t.ctx, database: { ...t.ctx.database, write: (work) => logged.transaction().execute(work) } };
    const refused = await removeCollection(ctx, 'issues', false).then(() => null, (err: unknown) => err);
    expect(refused).toBeInstanceOf(AppError);
    expect((refused as AppError).code).toBe('conflict');
    const kinds = log.nodes.map((n) => n.kind);
    expect(kinds).not.toContain('DeleteQueryNode');
    // One probe of a record, not a count of them all.
    expect(JSON.stringify(log.nodes)).not.toMatch(/"count"/i);
    const left = await t.ctx.database.db.selectFrom('records').select('id').where('collection', '=', 'issues').execute();
    expect(left).toHaveLength(3);
  });
});
