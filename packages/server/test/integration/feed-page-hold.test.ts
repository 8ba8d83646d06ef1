import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/dialects/types.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { DIALECTS } from '../helpers/db.js';
import { seedFeedEvents } from '../helpers/feed-seed.js';
import { turnCounter } from '../helpers/turn-counter.js';

/**
 * SPEC §12: no feed page keeps the process from answering others. Each page's statements carry a check
 * (QueryDialect.eventCheck) and run where Database.reads runs them (on SQLite a statement past the main connection's
 * budget is read again on a reader thread), and page reads take turns: one a turn of the event loop among all
 * requests. Before, the reads of requests that came together ran back to back in one turn (Kysely hands the main
 * connection on in microtasks): four clients paging through events of 3 KB held /healthz 301 ms.
 */
describe.each(DIALECTS)('feed pages take turns (%s)', (dialect) => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  it('the page reads of four requests that arrive together run in four turns of the event loop, and every page is whole', async () => {
    t = await createTestApp(dialect);
    await seedFeedEvents(t.ctx.database.db, dialect, { count: 400, collection: 'docs', payloadBytes: 3_000 });
    const token = await t.token(['events:read']);

    // Each page statement notes the turn it ran in.
    const counter = turnCounter();
    const turns: number[] = [];
    const database = t.ctx.database as { -readonly [K in keyof Database]: Database[K] };
    database.reads = database.reads.withPlugin(notingPages(() => turns.push(counter.turn)));
    try {
      const pages = await Promise.all(
        Array.from({ length: 4 }, () => t!.app.inject({ method: 'GET', url: '/api/v1/events?limit=100', headers: { authorization: `Bearer ${token}` } })),
      );
      for (const page of pages) {
        expect(page.statusCode).toBe(200);
        const { items } = page.json() as { items: Array<{ payload: { record: { data: { filler: string } } } }> };
        expect(items).toHaveLength(100);
        for (const e of items) expect(e.payload.record.data.filler).toHaveLength(3_000 - 120);
      }
    } finally {
      counter.stop();
    }
    // Each request's page (and the read-ahead of its next page, which reads in turns too).
    expect(turns.length).toBeGreaterThanOrEqual(4);
    expect(new Set(turns).size, `turns ${turns.join(', ')}`).toBe(turns.length);
  });
});

/** Calls `noted` when a feed page statement (its select names `big`, feed-store.ts) is about to run. */
function notingPages(noted: () => void): KyselyPlugin {
  return {
    transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
      const node = args.node as { kind: string; sqlFragments?: readonly string[] };
      if (node.kind === 'RawNode' && node.sqlFragments?.some((f) => f.includes(' as big'))) noted();
      return args.node;
    },
    transformResult: async (args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> => args.result,
  };
}
