/**
 * Targets' health from GET /admin/v1/webhooks/{id}/stats (docs/target-health.md): fetched a few at a time for a list,
 * and shown in the webhooks list's health column as the success rate and a sparkline of the last 24 hours.
 */
import { api, seg } from '../api.js';
import { h, replace } from '../dom.js';
import { percent } from '../ui/health-summary.js';
import { sparkline } from '../ui/sparkline.js';
import type { TargetStats, Webhook } from '../types.js';
import { badge } from './common.js';

/** How many targets' statistics are asked for at once. */
const PARALLEL = 6;
const DAY = 86_400_000;

/** Each target's statistics (default window: the last 24 hours), null where the request failed. */
export async function statsFor(targets: Webhook[], alive: () => boolean): Promise<Map<string, TargetStats | null>> {
  const out = new Map<string, TargetStats | null>();
  for (let i = 0; i < targets.length && alive(); i += PARALLEL) {
    await Promise.all(targets.slice(i, i + PARALLEL).map(async (t) => {
      out.set(t.id, await api.get<TargetStats>(`/webhooks/${seg(t.id)}/stats`).catch(() => null));
    }));
  }
  return out;
}

export const rateKind = (rate: number | null): string => (rate === null ? 'muted' : rate >= 0.99 ? 'ok' : rate >= 0.9 ? 'warn' : 'danger');

/** A target without attempts in the window: new ("no attempts yet") or quiet. */
export function noAttempts(createdAt: string, windowMs: number, testid: string): HTMLElement {
  const fresh = Date.now() - Date.parse(createdAt) < windowMs;
  return h('span', { class: 'muted small nowrap', testid }, fresh ? 'no attempts yet' : `no attempts in ${windowMs === DAY ? '24 h' : '7 days'}`);
}

/** The health cell of one target: filled by `fill` once its statistics are known. */
export function healthCell(target: Webhook): { cell: HTMLTableCellElement; fill(stats: TargetStats | null): void } {
  const cell = h('td', { class: 'cell-health', testid: 'webhook-health', 'aria-busy': 'true' }, h('span', { class: 'muted small' }, '…'));
  return {
    cell,
    fill(stats) {
      cell.removeAttribute('aria-busy');
      if (!stats) {
        replace(cell, h('span', { class: 'muted small', title: 'The statistics could not be read' }, 'unknown'));
        return;
      }
      if (stats.attempts.total === 0) {
        replace(cell, noAttempts(target.createdAt, DAY, 'health-none'));
        return;
      }
      const { succeeded, failed, total } = stats.attempts;
      const summary = `Last 24 hours, hour by hour: ${succeeded} of ${total} attempts succeeded, ${failed} failed`;
      replace(cell, h('span', { class: 'health-inline' },
        badge(percent(stats.successRate), rateKind(stats.successRate), 'health-rate'),
        sparkline(stats.buckets, summary)));
    },
  };
}
