import { CompiledQuery, sql, type Compilable, type Kysely } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import type { Tables } from '../../src/db/tables.js';
import { countsByHourQuery, durationAtRankQuery } from '../../src/webhooks/attempt-stats-store.js';
import { createTestContext, type TestContext } from '../helpers/context.js';
import { DIALECTS } from '../helpers/db.js';

const NOW = Date.UTC(2026, 10, 20, 12);
const HOUR = 3_600_000;

async function planOf(db: Kysely<Tables>, dialect: string, query: Compilable): Promise<string> {
  const compiled = query.compile();
  const explain = dialect === 'sqlite' ? 'explain query plan ' : 'explain ';
  const { rows } = await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(explain + compiled.sql, [...compiled.parameters]));
  return rows.map((r) => String(r.detail ?? r['QUERY PLAN'])).join('\n');
}

/**
 * A target's statistics read the window of its attempts from (webhook_id, started_at), migration 008: never a scan
 * of every attempt, however long the history. 20 000 attempts over 30 days for two targets; the window is a day.
 */
describe.each(DIALECTS)('target health statement plans (%s)', (dialect) => {
  let t: TestContext | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });

  it('reads one range of delivery_attempts_webhook_time', async () => {
    t = await createTestContext(dialect);
    const { db } = t.ctx.database;
    for (const id of ['wh_a', 'wh_b']) {
      await sql`insert into webhooks (id, name, url, topics, enabled, secret_sealed, created_at, updated_at)
                values (${id}, ${id}, 'https://example.com/', '["record.created"]', 1, 'x', ${NOW}, ${NOW})`.execute(db);
      await sql`insert into events (id, topic, collection, record_id, payload, created_at) values (${`evt_${id}`}, 'record.created', 'c', 'rec', '{}', ${NOW})`.execute(db);
      await sql`insert into delivery_jobs (id, webhook_id, event_id, topic, collection, record_id, state, attempt_count, round_start, next_attempt_at, created_at, updated_at)
                values (${`del_${id}`}, ${id}, ${`evt_${id}`}, 'record.created', 'c', 'rec', 'delivered', 1, 0, ${NOW}, ${NOW}, ${NOW})`.execute(db);
    }
    await sql`insert into delivery_attempts (job_id, webhook_id, number, started_at, duration_ms, status_code, error_code, error_message, response_snippet)
              with recursive n(i) as (select 1 union all select i + 1 from n where i < 10000)
              select 'del_' || w.id, w.id, i, cast(${NOW} as bigint) - cast(i as bigint) * ${sql.lit(Math.floor((30 * 24 * HOUR) / 10_000))}, i % 700, 200, null, null, ''
                from n cross join (select id from webhooks) w`.execute(db);
    if (dialect === 'postgres') await sql`analyze delivery_attempts`.execute(db);

    const window = { webhookId: 'wh_a', from: NOW - 24 * HOUR, to: NOW };
    for (const query of [countsByHourQuery(db, window), durationAtRankQuery(db, window, 100)]) {
      const plan = await planOf(db, dialect, query);
      expect(plan).not.toMatch(/Seq Scan on delivery_attempts|SCAN delivery_attempts(?! USING)/);
      expect(plan).toMatch(/delivery_attempts_webhook_time/);
    }
    const rows = await countsByHourQuery(db, window).execute();
    expect(rows.reduce((n, r) => n + Number(r.total), 0)).toBe(333);
  });
});
