import { sql, type Kysely } from 'kysely';

/**
 * Every engine (SPEC §14): a target delivers over HTTPS or into a broker the operator named in `SVC_BROKERS`.
 *
 * 1. `type`: `https` (every target so far), `nats`, `rabbitmq` or `redis`.
 * 2. `broker`: the configured broker's name, never its address (the admin API names brokers only). Null for https.
 * 3. Where in the broker, one column per field the API takes, null where the kind has none: `subject` (nats),
 *    `exchange` and `routing_key` (rabbitmq), `stream` and `max_length` (redis, `MAXLEN ~`). Separate columns rather
 *    than one JSON object: each is read by one sender and shown as one field, and a dump says what it holds.
 *
 * `url` stays NOT NULL and a broker target keeps `''` there (the API shows null): SQLite cannot drop a NOT NULL without
 * rebuilding the table, and every job's foreign key points at this one.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhooks add column type text not null default 'https' check (type in ('https', 'nats', 'rabbitmq', 'redis'))`.execute(db);
  await sql`alter table webhooks add column broker text`.execute(db);
  await sql`alter table webhooks add column subject text`.execute(db);
  await sql`alter table webhooks add column exchange text`.execute(db);
  await sql`alter table webhooks add column routing_key text`.execute(db);
  await sql`alter table webhooks add column stream text`.execute(db);
  await sql`alter table webhooks add column max_length bigint`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('svc migrations are forward-only');
}
