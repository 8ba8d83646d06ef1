import { sql, type Kysely } from 'kysely';
import type { Check } from '../db/compiled.js';
import type { DialectCapabilities } from '../db/dialects/types.js';
import { RunAgain } from '../db/run-again.js';
import type { Tables, WebhooksTable } from '../db/tables.js';
import type { Topic } from './topics.js';
import { enabledTargets, toTarget, type TargetRow } from './targets-store.js';

/** What enqueueMany needs to check targets a process kept: the check its inserts run, and what follows its failure. */
export interface TargetsCheck {
  /** The check of `trx`'s inserts when its writes planned with kept targets; null when they read none. */
  checkFor(trx: Kysely<Tables>): Check | null;
  /**
   * `err` from `trx`'s inserts: when it is the check's failure, the kept targets are forgotten and RunAgain is
   * thrown; anything else is thrown as it is.
   */
  failed(trx: Kysely<Tables>, err: unknown): never;
}

interface Kept {
  version: number;
  targets: readonly TargetRow[];
}

/**
 * The enabled targets one process keeps across record writes, with the version they were read at (PostgreSQL,
 * migration 022), instead of reading them in each write's transaction: one round trip less a write.
 *
 * A write plans its jobs with the kept targets, and its insert statement checks their version on its own snapshot
 * (`svc_targets_at`, insertTogether's check). The same version means no target changed between the read and that
 * snapshot: the jobs are exactly those a read on the insert's snapshot would have planned, and the write commits on
 * that snapshot's view of the targets. Another version fails the statement: the kept targets are dropped, the write
 * rolls back (or, outside a transaction, writes nothing) and runs again (RunAgain), reading them afresh. A change
 * made in this transaction itself is never seen this way (the version moves at its commit), and a record write
 * changes no target.
 *
 * The targets of one transaction are the ones it first planned with, for all its writes (a batch's), whatever another
 * transaction keeps meanwhile.
 *
 * A transaction that writes with the outbox must not change targets itself: it would read (and keep) its own
 * uncommitted change under the version before it. None does: record writes change no target, and the operational
 * events written with a target's change (auto-disable) read their targets with `enqueue` itself, not through the outbox.
 */
export class TargetsCache implements TargetsCheck {
  #kept: Kept | null = null;
  readonly #used = new WeakMap<Kysely<Tables>, Kept>();
  /**
   * The lowest version worth keeping: past the version of every check that failed. A read on an older snapshot that
   * ends after a newer one (two writes reading at once) is used by its own write (whose check then fails) but never
   * kept. A database restored to a lower version (svc is stopped for a restore: docs/production.md) is read by each
   * write until the process restarts.
   */
  #floor = 0;
  /**
   * Until then (performance.now()), writes read the targets in their own transaction and check nothing, as they did
   * before targets were kept: set by a check that failed, so that while targets keep changing (a script editing them,
   * auto-disable turning off one after another) a write runs at most twice instead of failing its checks RUN_AGAIN_MAX
   * times.
   */
  #readAfreshUntil = 0;
  readonly #afresh = new WeakMap<Kysely<Tables>, Promise<TargetRow[]>>();

  constructor(private readonly version: NonNullable<DialectCapabilities['targetsVersion']>) {}

  /** The enabled targets subscribed to `topic`, as `trx` plans with them. */
  async subscribed(trx: Kysely<Tables>, topic: Topic): Promise<TargetRow[]> {
    let used = this.#used.get(trx);
    if (!used) {
      if (performance.now() < this.#readAfreshUntil || this.#afresh.has(trx)) return (await this.afresh(trx)).filter((t) => t.topics.includes(topic));
      this.#used.set(trx, (used = this.#kept ?? (await this.read(trx))));
    }
    return used.targets.filter((t) => t.topics.includes(topic));
  }

  checkFor(trx: Kysely<Tables>): Check | null {
    const used = this.#used.get(trx);
    return used ? { name: 'targets-version', expression: this.version.at, value: used.version } : null;
  }

  failed(trx: Kysely<Tables>, err: unknown): never {
    const used = this.#used.get(trx);
    if (!used || !this.version.isChanged(err)) throw err;
    if (this.#kept !== null && this.#kept.version <= used.version) this.#kept = null;
    this.#floor = Math.max(this.#floor, used.version + 1);
    this.#readAfreshUntil = performance.now() + READ_AFRESH_MS;
    throw new RunAgain(`The targets changed since version ${used.version}, which a write planned with.`);
  }

  /** Every enabled target and their version, on one snapshot; kept for the writes after this one. */
  private async read(trx: Kysely<Tables>): Promise<Kept> {
    const rows = (
      await sql<WebhooksTable & { targets_version: number }>`select v.targets_version, w.*
          from (select (${this.version.read}) as targets_version) v
          left join webhooks w on w.enabled = 1 and w.deleted_at is null
         order by w.id`.execute(trx)
    ).rows;
    const read: Kept = { version: Number(rows[0]!.targets_version), targets: rows.filter((r) => r.id !== null).map(toTarget) };
    if (read.version >= this.#floor && (this.#kept === null || read.version >= this.#kept.version)) this.#kept = read;
    return read;
  }

  /** `trx`'s own read of the enabled targets, once per transaction, unchecked (what every write did before). */
  private afresh(trx: Kysely<Tables>): Promise<TargetRow[]> {
    let targets = this.#afresh.get(trx);
    if (!targets) this.#afresh.set(trx, (targets = enabledTargets(trx)));
    return targets;
  }
}

/** How long writes read targets afresh after a check failed (TargetsCache's #readAfreshUntil). */
const READ_AFRESH_MS = 1_000;
