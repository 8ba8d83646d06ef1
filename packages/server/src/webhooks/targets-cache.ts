import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Probe } from '../db/compiled.js';
import { RunAgain } from '../db/run-again.js';
import type { Tables, WebhooksTable } from '../db/tables.js';
import type { Topic } from './topics.js';
import { toTarget, type TargetRow } from './targets-store.js';

/**
 * What enqueueMany needs to check targets a process kept: the probe its inserts read, and the check of what it read.
 */
export interface TargetsCheck {
  /** The probe of `trx`'s inserts when its writes planned with kept targets; null when they read none. */
  probeFor(trx: Kysely<Tables>): Probe | null;
  /** After the inserts: throws RunAgain, and forgets the kept targets, when `seen` is not the version planned with. */
  confirm(trx: Kysely<Tables>, seen: unknown): void;
}

interface Kept {
  version: number;
  targets: readonly TargetRow[];
}

/**
 * The enabled targets one process keeps across record writes, with the version they were read at (PostgreSQL,
 * migration 022), instead of reading them in each write's transaction: one round trip less a write.
 *
 * A write plans its jobs with the kept targets, and its inserts read the version on their own snapshot
 * (insertTogether's probe, in the same statement). The same version means no target changed between the read and
 * that snapshot: the jobs are exactly those a read on the inserts' snapshot would have planned, and that is the
 * snapshot the write commits on. Another version means some target changed (here or in another process): the kept
 * targets are dropped, the transaction rolls back and runs again (RunAgain), reading them afresh. A change made in
 * this transaction itself is never seen this way (the version moves at its commit), and a record write changes no
 * target.
 *
 * The targets of one transaction are the ones it first planned with, for all its writes (a batch's), whatever another
 * transaction keeps meanwhile.
 */
export class TargetsCache implements TargetsCheck {
  #kept: Kept | null = null;
  readonly #used = new WeakMap<Kysely<Tables>, Kept>();
  readonly #probe: Probe;

  constructor(private readonly version: RawBuilder<number>) {
    this.#probe = { name: 'targets-version', query: version };
  }

  /** The enabled targets subscribed to `topic`, as `trx` plans with them. */
  async subscribed(trx: Kysely<Tables>, topic: Topic): Promise<TargetRow[]> {
    let used = this.#used.get(trx);
    if (!used) this.#used.set(trx, (used = this.#kept ?? (await this.read(trx))));
    return used.targets.filter((t) => t.topics.includes(topic));
  }

  probeFor(trx: Kysely<Tables>): Probe | null {
    return this.#used.has(trx) ? this.#probe : null;
  }

  confirm(trx: Kysely<Tables>, seen: unknown): void {
    const used = this.#used.get(trx);
    if (!used || seen === used.version) return;
    if (this.#kept === used) this.#kept = null;
    throw new RunAgain(`The targets changed (version ${used.version} → ${String(seen)}) while a write planned with them.`);
  }

  /** Every enabled target and their version, on one snapshot; kept for the writes after this one. */
  private async read(trx: Kysely<Tables>): Promise<Kept> {
    const rows = (
      await sql<WebhooksTable & { targets_version: number }>`select v.targets_version, w.*
          from (select (${this.version}) as targets_version) v
          left join webhooks w on w.enabled = 1 and w.deleted_at is null
         order by w.id`.execute(trx)
    ).rows;
    const read: Kept = { version: Number(rows[0]!.targets_version), targets: rows.filter((r) => r.id !== null).map(toTarget) };
    this.#kept = read;
    return read;
  }
}
