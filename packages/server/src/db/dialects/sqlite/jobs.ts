import { CompiledQuery, sql, type Kysely } from 'kysely';
import type { Tables } from '../../tables.js';
import { ARRAY_ROWS } from '../sqlite-statements.js';
import type { ClaimRow, ClaimStatementOptions, ClaimTarget, DeliveredJob, JobsDriver } from '../types.js';

/**
 * The delivery queue's SQLite statements (types.ts JobsDriver): a transition with a consequence elsewhere is its
 * statements in one transaction (one writer at a time: nothing else runs between them, and they share one commit).
 */

/**
 * A batch's statement in a few sizes: the smallest of `sizes` that holds the batch (the largest is the most a statement
 * takes), its rows or ids past the batch bound as nulls, which match no job. The statement cache then holds a text a
 * size, not one a batch size; each is built once.
 */
function paddedStatements(sizes: readonly number[], build: (size: number) => string) {
  const texts = new Map<number, string>();
  const max = sizes[sizes.length - 1]!;
  return {
    max,
    sizeFor: (n: number): number => sizes.find((s) => s >= n) ?? max,
    text(size: number): string {
      let text = texts.get(size);
      if (text === undefined) texts.set(size, (text = build(size)));
      return text;
    },
  };
}

export const sqliteJobs: JobsDriver = {
  claim(db, opts) {
    // Its statements in one write transaction (begin immediate): nothing else writes between the pick and the update.
    return db.isTransaction ? claimIn(db, opts) : db.transaction().execute((trx) => claimIn(trx, opts));
  },
  delivered(db, now, done, then) {
    const work = async (trx: typeof db) => {
      const rows: Array<{ id: string; webhook_id: string; ordered: number }> = [];
      for (let start = 0; start < done.length; start += DELIVERED.max) {
        const chunk = done.slice(start, start + DELIVERED.max);
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
 * statement takes up to 64 rows, padded with rows of nulls to 1, 4, 16 or 64 (paddedStatements).
 */
const DELIVERED_COLUMNS = ['id', 'lease', 'started_at', 'duration_ms', 'status_code', 'snippet', 'remote_address', 'dns_ms', 'connect_ms', 'tls_ms', 'first_byte_ms'] as const;

const DELIVERED = paddedStatements([1, 4, 16, 64], (size) => {
  const tuple = `(${DELIVERED_COLUMNS.map(() => '?').join(', ')})`;
  return `with a (${DELIVERED_COLUMNS.join(', ')}) as (values ${Array.from({ length: size }, () => tuple).join(', ')})
      update delivery_jobs
         set state = 'delivered', attempt_count = attempt_count + 1, lease_id = null, lease_expires_at = null,
             last_error_code = null, last_error_message = null, updated_at = ?,
             success_started_at = a.started_at, success_duration_ms = a.duration_ms, success_status_code = a.status_code,
             success_snippet = a.snippet, success_remote_address = a.remote_address, success_dns_ms = a.dns_ms,
             success_connect_ms = a.connect_ms, success_tls_ms = a.tls_ms, success_first_byte_ms = a.first_byte_ms
        from a
       where delivery_jobs.id = a.id and delivery_jobs.state = 'delivering' and delivery_jobs.lease_id = a.lease
      returning delivery_jobs.id, delivery_jobs.webhook_id, delivery_jobs.ordered`;
});

function deliveredStatement(rows: number): { text: string; size: number } {
  const size = DELIVERED.sizeFor(rows);
  return { text: DELIVERED.text(size), size };
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

/**
 * The claim in three statements (measured against the one statement PostgreSQL runs, which SQLite ran before: 244
 * jobs of W4's 20,000 claimed, a transaction rolled back after each, medians of 25: 19.5-21.2 -> 13.1-14.6 us a job):
 *
 * 1. The pick: each target's oldest due jobs (a range of the partial index of pending jobs, a limit each) with each
 *    job's payload size, read from the event's record header (`octet_length`, the events' primary key), not the payload.
 * 2. The byte budget, here in JavaScript over at most `limit` sizes a target: the running sum in due order (then by
 *    id) keeps the jobs that fit, and always the first. SQLite had run it as a window function over a UNION ALL, with
 *    the update finding the chosen ids through the subquery: a third of the statement's cost.
 * 3. The chosen jobs' rows with their events' payloads (and, in a process that traces, their trace context: the same
 *    join, no probe of its own), then the update, by primary key both, with no RETURNING: the update's RETURNING had
 *    read each payload through a subquery and kept the rows in a table of its own until the statement ended, as much
 *    again as the update itself.
 */
async function claimIn(trx: Kysely<Tables>, opts: ClaimStatementOptions): Promise<ClaimRow[]> {
  const { rows: due } = await trx.executeQuery<PickRow>(CompiledQuery.raw(pickText(opts.targets), pickParameters(opts)));
  const ids = withinBudgets(opts.targets, due, opts.overheadBytes);
  const rows: ClaimRow[] = [];
  const read = opts.withTrace ? READ_TRACED : READ;
  for (let start = 0; start < ids.length; start += UPDATE.max) {
    const chunk = ids.slice(start, start + UPDATE.max);
    const size = UPDATE.sizeFor(chunk.length);
    const padded = [...chunk, ...new Array<null>(size - chunk.length).fill(null)];
    rows.push(...(await trx.executeQuery<ClaimRow>(CompiledQuery.raw(read.text(size), padded))).rows);
    await trx.executeQuery(CompiledQuery.raw(UPDATE.text(size), [opts.lease, opts.now + opts.leaseMs, opts.now, ...padded]));
  }
  return rows;
}

type PickRow = readonly [webhookId: string, id: string, nextAttemptAt: number, payloadBytes: number];

/** Each target's jobs in due order, then by id, while their running sum fits its budget; the first always. */
function withinBudgets(targets: readonly ClaimTarget[], due: readonly PickRow[], overheadBytes: number): string[] {
  const byTarget = new Map<string, PickRow[]>();
  for (const row of due) {
    const list = byTarget.get(row[0]);
    if (list) list.push(row);
    else byTarget.set(row[0], [row]);
  }
  const ids: string[] = [];
  for (const t of targets) {
    const rows = byTarget.get(t.webhookId);
    if (!rows) continue;
    rows.sort((a, b) => a[2] - b[2] || (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
    let bytes = 0;
    for (let i = 0; i < rows.length; i++) {
      bytes += rows[i]![3] + overheadBytes;
      if (i > 0 && bytes > t.maxBytes) break;
      ids.push(rows[i]![1]);
    }
  }
  return ids;
}

/**
 * One part a target: a range probe of the pending jobs' partial index by (webhook_id, next_attempt_at), so the cost
 * does not grow with the backlog, behind the target's own check: the database, not a worker's view of it, decides
 * that a disabled or deleted target's jobs wait, and that a limited one's are claimed only through its bucket. A text
 * a shape of targets (how many, which limited), kept.
 *
 * Its limit is `(? + 0)`, not `?`: SQLite (3.53) reads a bare LIMIT parameter's value when it plans, and marks the
 * statement to be planned again whenever that parameter is bound, which better-sqlite3 does on every run. The pick was
 * parsed and planned anew at every claim (callgrind, a W4 drain of 9,000 jobs: 734 `sqlite3Reprepare` calls of
 * ~212,000 instructions each, 26,000 a delivery). The planner never had the value: it reads an INTEGER there, and
 * better-sqlite3 binds every number as a REAL (QueryDialect.limit, sqlite.ts); the index serves the order whatever
 * the limit (claim-plan.test.ts).
 */
const pickTexts = new Map<string, string>();
function pickText(targets: readonly ClaimTarget[]): string {
  const shape = targets.map((t) => (t.limited ? 'l' : 'u')).join('');
  let text = pickTexts.get(shape);
  if (text === undefined) {
    const part = (limited: boolean) => `select * from (
        select j.webhook_id, j.id, j.next_attempt_at, coalesce((select octet_length(e.payload) from events e where e.id = j.event_id), 0)
          from delivery_jobs j
         where j.webhook_id = ? and j.state = 'pending' and j.next_attempt_at <= ?
           and exists (select 1 from webhooks w where w.id = ? and w.enabled = 1 and w.deleted_at is null${limited ? '' : ' and w.rate_per_second is null'})
         order by j.next_attempt_at
         limit (? + 0))`;
    text = ARRAY_ROWS + targets.map((t) => part(t.limited)).join('\n union all ');
    if (pickTexts.size >= 256) pickTexts.clear();
    pickTexts.set(shape, text);
  }
  return text;
}

function pickParameters(opts: ClaimStatementOptions): unknown[] {
  return opts.targets.flatMap((t) => [t.webhookId, opts.now, t.webhookId, t.limit]);
}

/**
 * Ids a statement: up to 512, padded with nulls to one of these counts (paddedStatements). Steps of two from 32 on: a
 * padded parameter costs its binding and its entry in the IN list's table (244 ids padded to 512 were a tenth of the
 * statements' instructions).
 */
const BY_ID_SIZES = [1, 8, 32, 64, 128, 256, 512];
const placeholders = (n: number) => new Array<string>(n).fill('?').join(', ');

const readSql = (withTrace: boolean) => (size: number) =>
  `${ARRAY_ROWS}select j.id, j.webhook_id, j.topic, j.collection, j.record_id, j.attempt_count, j.round_start, cast(e.payload as blob),
          ${withTrace ? "e.traceparent || ' ' || coalesce(e.tracestate, '')" : 'null'}
     from delivery_jobs j left join events e on e.id = j.event_id
    where j.id in (${placeholders(size)})`;
const READ = paddedStatements(BY_ID_SIZES, readSql(false));
const READ_TRACED = paddedStatements(BY_ID_SIZES, readSql(true));
const UPDATE = paddedStatements(
  BY_ID_SIZES,
  (size) => `update delivery_jobs set state = 'delivering', lease_id = ?, lease_expires_at = ?, updated_at = ? where id in (${placeholders(size)})`,
);

/** For the plan test: the claim's statements for these targets, and for `ids` chosen jobs. */
export const claimStatementTexts = (targets: readonly ClaimTarget[], ids: number) => {
  const size = UPDATE.sizeFor(ids);
  return { pick: pickText(targets), read: READ_TRACED.text(size), update: UPDATE.text(size), size };
};
