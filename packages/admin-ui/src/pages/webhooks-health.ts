/**
 * Targets' health from GET /admin/v1/webhooks/stats (docs/target-health.md): pages of every target's statistics, one
 * request per 200 targets, shown in the webhooks list's health column as the success rate and a sparkline of the last
 * 24 hours, and in the health overview.
 */
import { api, seg } from '../api.js';
import { h, replace } from '../dom.js';
import { percent } from '../ui/health-summary.js';
import { sparkline } from '../ui/sparkline.js';
import type { TargetStats, TargetStatsPage, Webhook } from '../types.js';
import { badge } from './common.js';

/** The most targets a page of GET /admin/v1/webhooks/stats holds. */
const PAGE = 200;
/** How many targets' statistics are asked for at once when one is asked for alone. */
const PARALLEL = 6;
const DAY = 86_400_000;

/**
 * Every target's statistics from `cursor` on (the targets list's cursors are the statistics list's too), page after
 * page, stopping after `through` (an id) when given. A page that cannot be read ends the walk: what it held is absent.
 */
export async function statsPages(alive: () => boolean, opts: { cursor?: string | null; through?: string; limit?: number } = {}): Promise<Map<string, TargetStats>> {
  const out = new Map<string, TargetStats>();
  let cursor = opts.cursor ?? null;
  try {
    do {
      const page: TargetStatsPage = await api.get<TargetStatsPage>('/webhooks/stats', { limit: Math.min(PAGE, opts.limit ?? PAGE), cursor });
      for (const item of page.items) out.set(item.webhookId, item.stats);
      const last = page.items.at(-1)?.webhookId;
      cursor = opts.through !== undefined && last !== undefined && last >= opts.through ? null : page.nextCursor;
    } while (cursor && alive());
  } catch {
    // The targets it did not reach are asked for alone (statsFor) or shown as unknown.
  }
  return out;
}

/**
 * Each target's statistics (default window: the last 24 hours), null where they could not be read: the pages of
 * GET /admin/v1/webhooks/stats that hold them (from `cursor`, the one the targets were listed from), and any target
 * those pages lack (created or read meanwhile) asked for alone, a few at a time.
 */
export async function statsFor(targets: Webhook[], alive: () => boolean, cursor: string | null = null, known?: Map<string, TargetStats>): Promise<Map<string, TargetStats | null>> {
  const out = new Map<string, TargetStats | null>();
  if (targets.length === 0) return out;
  const through = targets.reduce((max, t) => (t.id > max ? t.id : max), targets[0]!.id);
  const pages = known ?? await statsPages(alive, { cursor, through, limit: targets.length });
  const missing: Webhook[] = [];
  for (const t of targets) {
    const stats = pages.get(t.id);
    if (stats) out.set(t.id, stats);
    else missing.push(t);
  }
  for (let i = 0; i < missing.length && alive(); i += PARALLEL) {
    await Promise.all(missing.slice(i, i + PARALLEL).map(async (t) => {
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
