import { sql, type Kysely } from 'kysely';

/**
 * Every receiver (SPEC §13): what a target signs with, what it sends besides, and how often it may be attempted.
 *
 * 1. `signature_scheme` (`svc`, `standard`, `both`) and `signature_algorithm` (`hmac-sha256`, `ed25519`). An ed25519
 *    target keeps its private key where a secret would be (`secret_sealed`, `previous_secret_sealed`: sealed alike,
 *    erased alike, rotated alike) and its public key in the clear (`public_key`: `whpk_…`, shown in every answer).
 * 2. `headers_sealed`: the static headers, a JSON object sealed as a whole (a dump shows no value); `headers_shown`:
 *    the same names with each value masked as answers show it (`…a1b2`), so no answer opens the seal.
 * 3. `rate_per_second`: the limit, null for none. `rate_window` (a Unix second) and `rate_used` (attempts started
 *    in it) are the bucket every process shares: a claim takes from it in the claim's transaction (docs/delivery-states.md).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhooks add column signature_scheme text not null default 'svc'`.execute(db);
  await sql`alter table webhooks add column signature_algorithm text not null default 'hmac-sha256'`.execute(db);
  await sql`alter table webhooks add column public_key text`.execute(db);
  await sql`alter table webhooks add column headers_sealed text`.execute(db);
  await sql`alter table webhooks add column headers_shown text`.execute(db);
  await sql`alter table webhooks add column rate_per_second integer`.execute(db);
  await sql`alter table webhooks add column rate_window bigint`.execute(db);
  await sql`alter table webhooks add column rate_used integer not null default 0`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('svc migrations are forward-only');
}
