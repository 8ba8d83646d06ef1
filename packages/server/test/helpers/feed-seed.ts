import { sql, type Kysely } from 'kysely';
import type { Tables } from '../../src/db/tables.js';
import type { Dialect } from './db.js';

/**
 * Feed events written straight into `events` in bulk, by the database itself (a recursive CTE on SQLite,
 * generate_series on PostgreSQL), in transactions of `batch` rows: 200,000 events in seconds, where the write path
 * takes minutes. Each row is what the write path stores (envelope.ts feedEventPrefix): the same JSON prefix, a
 * payload naming its event id, so the feed reads them as it reads any other.
 *
 * Positions are `first`, `first + step`, … under one `tx` (SQLite's is always 0; on PostgreSQL a `tx` below every
 * real transaction id, 1 by default, sorts them before every event the write path adds later and below the horizon).
 * A step above 1 leaves gaps in which a test can plant an event "in the past".
 */
export async function seedFeedEvents(
  db: Kysely<Tables>,
  dialect: Dialect,
  opts: { count: number; collection: string; first?: number; step?: number; tx?: number; batch?: number; payloadBytes?: number; createdAt?: number },
): Promise<{ tx: number; last: number }> {
  const { count, collection } = opts;
  const first = opts.first ?? 1;
  const step = opts.step ?? 1;
  const tx = opts.tx ?? (dialect === 'sqlite' ? 0 : 1);
  const batch = opts.batch ?? 20_000;
  const createdAt = opts.createdAt ?? Date.UTC(2026, 0, 1);
  const occurredAt = new Date(createdAt).toISOString();
  const filler = 'x'.repeat(Math.max(0, (opts.payloadBytes ?? 0) - 120));
  for (let from = 0; from < count; from += batch) {
    const n = Math.min(batch, count - from);
    await db.transaction().execute(async (trx) => {
      // i counts from 0; the event id and record id are unique per position.
      const rows =
        dialect === 'sqlite'
          ? sql`with recursive s(i) as (select ${from} union all select i + 1 from s where i < ${from + n - 1})
                select i, 'evt_seed' || printf('%012d', ${first} + i * ${step}) as id, 'rec_seed' || printf('%012d', i) as rid from s`
          : sql`select i, 'evt_seed' || lpad((${first}::bigint + i * ${step})::text, 12, '0') as id, 'rec_seed' || lpad(i::text, 12, '0') as rid
                  from generate_series(${from}::bigint, ${from + n - 1}::bigint) as i`;
      await sql`
        insert into events (id, topic, collection, record_id, payload, created_at, tx, position, json_prefix)
        select id, 'record.created', ${collection}, rid,
               '{"record":{"id":"' || rid || '","collection":"' || ${collection} || '","data":{"filler":"' || ${filler} || '"}},"occurredAt":"' || ${occurredAt} || '","eventId":"' || id || '"}',
               ${createdAt}, ${tx}, ${first} + i * ${step},
               '{"id":"' || id || '","topic":"record.created","collection":"' || ${collection} || '","recordId":"' || rid || '","occurredAt":"' || ${occurredAt} || '","payload":'
          from (${rows}) seed`.execute(trx);
    });
  }
  return { tx, last: first + (count - 1) * step };
}
