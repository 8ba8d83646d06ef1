import { sql, SqliteAdapter, type Kysely } from 'kysely';

/**
 * Job rows that cost less to move through their states, and indexes that hold only unfinished jobs.
 *
 * 1. The payload of an event is kept once, on the event, instead of inside every job's envelope: a job row shrinks from
 * ~1.5 KB to ~250 bytes, so claiming and completing jobs (two row rewrites each) touch a fraction of the pages, and
 * an event with ten targets stores its payload once, not ten times. The envelope is rebuilt byte for byte from the
 * job and the payload (envelope.ts). Jobs written before hold envelopes
 * `{"version":"1","id":…,"topic":…,"collection":…,"recordId":…,"payload":P}`. Nothing before `"payload"` can contain `,"payload":` (ids are generated, topics fixed, collection names
 * identifiers), so P is the text after its first occurrence, up to the closing brace: the exact bytes once signed.
 *
 * 2. The queue's indexes are partial: only pending jobs (claims, per target and oldest due first) and delivering ones
 * (leases, for the rescue); dead ones have their own, for the admin's list of failures. Each transition removes a job from one index and adds it to at most one other, instead of
 * rewriting an entry in two indexes that also held every delivered job ever; and delivered jobs, the great majority
 * over time, no longer grow them. Queries name the state as a literal, so both databases can prove the index applies.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('events').addColumn('payload', 'text').execute();
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  const at = sqlite ? sql`instr(j.body, ',"payload":')` : sql`strpos(j.body, ',"payload":')`;
  // Each event finds its jobs through this index: without it the update is events × jobs row visits.
  await db.schema.createIndex('delivery_jobs_event_tmp').on('delivery_jobs').column('event_id').execute();
  await sql`
    update events set payload = (
      select substr(j.body, ${at} + 11, length(j.body) - ${at} - 11)
        from delivery_jobs j
       where j.event_id = events.id
       limit 1)
     where exists (select 1 from delivery_jobs j where j.event_id = events.id)`.execute(db);
  await db.schema.dropIndex('delivery_jobs_event_tmp').execute();
  await db.schema.alterTable('delivery_jobs').dropColumn('body').execute();

  await db.schema.dropIndex('delivery_jobs_due').execute();
  await db.schema.dropIndex('delivery_jobs_claim').execute();
  await sql`create index delivery_jobs_pending on delivery_jobs (webhook_id, next_attempt_at) where state = 'pending'`.execute(db);
  await sql`create index delivery_jobs_pending_due on delivery_jobs (next_attempt_at) where state = 'pending'`.execute(db);
  await sql`create index delivery_jobs_leases on delivery_jobs (lease_expires_at) where state = 'delivering'`.execute(db);
  // The admin's "what failed?" list (state = dead, newest first): dead jobs are few among many delivered ones.
  await sql`create index delivery_jobs_dead on delivery_jobs (id) where state = 'dead'`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('svc migrations are forward-only');
}
