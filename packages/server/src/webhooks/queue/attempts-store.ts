import type { Kysely } from 'kysely';
import type { DeliveryAttemptsTable, Tables } from '../../db/tables.js';
import type { AttemptRecord } from './job.js';
import type { Pace } from '../../lib/turns.js';
import type { DeliveryId, WebhookId } from '../../lib/ids.js';

/**
 * The attempt row a failure transition writes beside its update. A delivered job keeps its delivering attempt on its
 * own row instead (complete.ts, migration 020).
 */
export async function insertAttempt(trx: Kysely<Tables>, job: { id: DeliveryId; webhookId: WebhookId }, number: number, a: AttemptRecord): Promise<void> {
  await trx.insertInto('delivery_attempts_rows').values(attemptValues(job.id, job.webhookId, number, a)).execute();
}

/** The row an attempt becomes (complete.ts writes the same facts into a job's `success_*` columns). */
export function attemptValues(jobId: string, webhookId: string, number: number, a: AttemptRecord): DeliveryAttemptsTable {
  const t = a.trace?.timings;
  return {
    job_id: jobId,
    webhook_id: webhookId,
    number,
    started_at: a.startedAt,
    duration_ms: Math.round(a.durationMs),
    status_code: a.statusCode,
    error_code: a.error?.code ?? null,
    error_message: a.error?.message ?? null,
    response_snippet: a.responseSnippet,
    remote_address: a.trace?.remoteAddress ?? null,
    dns_ms: t?.dnsMs ?? null,
    connect_ms: t?.connectMs ?? null,
    tls_ms: t?.tlsMs ?? null,
    first_byte_ms: t?.firstByteMs ?? null,
  };
}

/** Attempts a page of attemptPages reads: at most ~1.3 MB of snippets and messages (1 KiB each at most, escaped). */
export const ATTEMPTS_PAGE = 500;

/**
 * A job's attempts, oldest first, through the view `delivery_attempts` (migration 020: its attempt rows and the success
 * its row holds), a page at a time (by number), with a turn of the event loop between pages when the pace is spent: a job
 * retried again and again has as many attempts as its rounds allow (20,000 of 1 KiB snippets read at once, written
 * as 25 MB of JSON, held the event loop ~950 ms on SQLite).
 */
export async function* attemptPages(db: Kysely<Tables>, jobId: string, pace: Pace): AsyncGenerator<DeliveryAttemptsTable[]> {
  let after: number | null = null;
  for (;;) {
    let q = db.selectFrom('delivery_attempts').selectAll().where('job_id', '=', jobId).orderBy('number').limit(ATTEMPTS_PAGE);
    if (after !== null) q = q.where('number', '>', after);
    const page = await q.execute();
    if (page.length > 0) yield page;
    if (page.length < ATTEMPTS_PAGE) return;
    after = Number(page[page.length - 1]!.number);
    await pace.slice();
  }
}

/** Two statements that must land together: inside the caller's transaction, or in one of our own. */
export const inTransaction = <T>(db: Kysely<Tables>, work: (trx: Kysely<Tables>) => Promise<T>): Promise<T> =>
  db.isTransaction ? work(db) : db.transaction().execute(work);
