import type { Kysely } from 'kysely';
import type { Tables } from '../db/tables.js';
import { toTarget, type DisabledReason, type TargetRow } from './targets-store.js';

/** One target's failed attempts in one written batch. */
export interface FailureTally {
  webhookId: string;
  failures: number;
  /** When the earliest of them started: the streak's start if the target had none. */
  firstAt: number;
  /** One of them was answered 410 Gone. */
  gone: boolean;
}

export interface AutoDisableRule {
  afterMs: number;
  minFailures: number;
}

/**
 * Adds failed attempts to their targets' counters (a success resets them: see complete.ts) and disables, in the
 * caller's transaction, each target a 410 or the rule strikes (SPEC §10): no success since the first failed attempt
 * of the streak for `afterMs`, and at least `minFailures` failed attempts since. O(1) per target, never a scan of
 * attempts. Returns the targets it disabled, as they are afterwards, and why.
 */
export async function recordFailures(
  trx: Kysely<Tables>,
  opts: { now: number; tallies: readonly FailureTally[]; rule: AutoDisableRule },
): Promise<Array<{ target: TargetRow; reason: Exclude<DisabledReason, 'manual'> }>> {
  const { now, rule } = opts;
  const disabled: Array<{ target: TargetRow; reason: Exclude<DisabledReason, 'manual'> }> = [];
  for (const t of opts.tallies) {
    const row = await trx
      .updateTable('webhooks')
      .set((eb) => ({
        failing_since: eb.fn.coalesce('failing_since', eb.val(t.firstAt)),
        failed_attempts: eb('failed_attempts', '+', t.failures),
      }))
      .where('id', '=', t.webhookId)
      .where('deleted_at', 'is', null)
      .returning(['enabled', 'failing_since', 'failed_attempts'])
      .executeTakeFirst();
    if (!row || row.enabled !== 1) continue;
    const failing = row.failing_since !== null && now - Number(row.failing_since) >= rule.afterMs && row.failed_attempts >= rule.minFailures;
    const reason = t.gone ? 'gone' : failing ? 'failing' : null;
    if (!reason) continue;
    const after = await trx
      .updateTable('webhooks')
      .set({ enabled: 0, disabled_reason: reason, disabled_at: now, updated_at: now })
      .where('id', '=', t.webhookId)
      .where('enabled', '=', 1)
      .where('deleted_at', 'is', null)
      .returningAll()
      .executeTakeFirst();
    if (after) disabled.push({ target: toTarget(after), reason });
  }
  return disabled;
}
