import { sql, type Kysely } from 'kysely';

/**
 * The trace context of the write that made an event (SPEC §15): its W3C `traceparent` and `tracestate`, so every
 * delivery attempt of the event, in any process and however much later, is a span of that trace, and the feed
 * event names it. Null when the write was not traced (tracing off, or not sampled) and in every row written before
 * this migration: nothing is rewritten, older processes never read the columns.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table events add column traceparent text`.execute(db);
  await sql`alter table events add column tracestate text`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('svc migrations are forward-only');
}
