import { CompiledQuery, sql } from 'kysely';
import type { DeliveredJob, JobsDriver } from '../types.js';

/**
 * The delivery queue's SQLite statements (types.ts JobsDriver): a transition with a consequence elsewhere is its
 * statements in one transaction (one writer at a time: nothing else runs between them, and they share one commit).
 */

export const sqliteJobs: JobsDriver = {
  delivered(db, now, done, then) {
    const work = async (trx: typeof db) => {
      const rows: Array<{ id: string; webhook_id: string; ordered: number }> = [];
      for (let start = 0; start < done.length; start += DELIVERED_ROWS_MAX) {
        const chunk = done.slice(start, start + DELIVERED_ROWS_MAX);
        const { text, size } = deliveredStatement(chunk.length);
        rows.push(...(await trx.executeQuery<{ id: string; webhook_id: string; ordered: number }>(CompiledQuery.raw(text, deliveredParameters(chunk, size, now)))).rows);
      }
      await then(trx, rows);
      // A success ends its target's failing streak (auto-disable's counters, migration 007).
      const targets = [...new Set(rows.map((r) => r.webhook_id))];
      if (targets.length > 0) {
        await sql`update webhooks set failing_since = null, failed_attempts = 0 where id in (${sql.join(targets)}) and failing_since is not null`.execute(trx);
      }
      return rows.map((r) => ({ id: r.id, ordered: r.ordered }));
    };
    // Inside the caller's transaction, or in one of its own.
    return db.isTransaction ? work(db) : db.transaction().execute(work);
  },
};

/**
 * A completion's attempts travel as bound parameters, a row of values each, not as one JSON text: SQLite's JSON
 * functions parsed the text again for every value read (`value ->> n`, eleven a job), a sixth of the instructions
 * the claim and the completion of a job cost together (callgrind, W4's 20,000 jobs: 183,000 → 154,000 a job). A
 * statement takes up to DELIVERED_ROWS_MAX rows, padded up to one of DELIVERED_ROW_SIZES with rows of nulls (a null
 * id matches no job), so the statement cache holds four texts, not one per batch size.
 */
const DELIVERED_ROW_SIZES = [1, 4, 16, 64] as const;
const DELIVERED_ROWS_MAX = 64;
const DELIVERED_COLUMNS = ['id', 'lease', 'started_at', 'duration_ms', 'status_code', 'snippet', 'remote_address', 'dns_ms', 'connect_ms', 'tls_ms', 'first_byte_ms'] as const;

const deliveredTexts = new Map<number, string>();

function deliveredStatement(rows: number): { text: string; size: number } {
  const size = DELIVERED_ROW_SIZES.find((s) => s >= rows) ?? DELIVERED_ROWS_MAX;
  let text = deliveredTexts.get(size);
  if (text === undefined) {
    const tuple = `(${DELIVERED_COLUMNS.map(() => '?').join(', ')})`;
    text = `with a (${DELIVERED_COLUMNS.join(', ')}) as (values ${Array.from({ length: size }, () => tuple).join(', ')})
      update delivery_jobs
         set state = 'delivered', attempt_count = attempt_count + 1, lease_id = null, lease_expires_at = null,
             last_error_code = null, last_error_message = null, updated_at = ?,
             success_started_at = a.started_at, success_duration_ms = a.duration_ms, success_status_code = a.status_code,
             success_snippet = a.snippet, success_remote_address = a.remote_address, success_dns_ms = a.dns_ms,
             success_connect_ms = a.connect_ms, success_tls_ms = a.tls_ms, success_first_byte_ms = a.first_byte_ms
        from a
       where delivery_jobs.id = a.id and delivery_jobs.state = 'delivering' and delivery_jobs.lease_id = a.lease
      returning delivery_jobs.id, delivery_jobs.webhook_id, delivery_jobs.ordered`;
    deliveredTexts.set(size, text);
  }
  return { text, size };
}

function deliveredParameters(chunk: readonly DeliveredJob[], size: number, now: number): unknown[] {
  const width = DELIVERED_COLUMNS.length;
  // Rows past the chunk stay null: padding.
  const parameters = new Array<unknown>(size * width + 1).fill(null);
  for (let i = 0; i < chunk.length; i++) {
    const d = chunk[i]!;
    const at = i * width;
    parameters[at] = d.id;
    parameters[at + 1] = d.lease;
    parameters[at + 2] = d.startedAt;
    parameters[at + 3] = d.durationMs;
    parameters[at + 4] = d.statusCode;
    parameters[at + 5] = d.snippet;
    parameters[at + 6] = d.remoteAddress;
    parameters[at + 7] = d.dnsMs;
    parameters[at + 8] = d.connectMs;
    parameters[at + 9] = d.tlsMs;
    parameters[at + 10] = d.firstByteMs;
  }
  parameters[size * width] = now;
  return parameters;
}

/** For the plan test: the statement a completion of `rows` jobs runs. */
export const deliveredStatementText = (rows: number): string => deliveredStatement(rows).text;
