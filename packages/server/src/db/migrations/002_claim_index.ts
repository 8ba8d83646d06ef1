import type { Kysely } from 'kysely';

/** Claims are per target: (webhook_id, state, next_attempt_at) makes each one an index range probe. */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('delivery_jobs_claim').on('delivery_jobs').columns(['webhook_id', 'state', 'next_attempt_at']).execute();
}

export async function down(): Promise<void> {
  throw new Error('svc migrations are forward-only');
}
