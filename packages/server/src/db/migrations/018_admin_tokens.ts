import { sql, type Kysely } from 'kysely';

/**
 * Admin tokens (SPEC §16): automation on the admin API without a cookie. Looked up by the SHA-256 of the token
 * (the unique index), as API tokens are; no foreign key to admins, so deleting an admin keeps the row's
 * `created_by` as a record of who made it. Additive: older processes never read the table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create table admin_tokens (
    id text primary key,
    name text not null,
    token_hash text not null unique,
    scopes text not null,
    created_at bigint not null,
    last_used_at bigint,
    created_by text not null
  )`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('svc migrations are forward-only');
}
