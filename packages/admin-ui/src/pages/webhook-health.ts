import { api, seg } from '../api.js';
import { h, replace } from '../dom.js';
import { errorBanner, notice } from '../ui/feedback.js';
import { busy, button, field, select } from '../ui/form.js';
import { healthChart } from '../ui/health-chart.js';
import { healthFigures } from '../ui/health-summary.js';
import { localInputValue } from '../ui/local-time.js';
import type { RecoverResult, ReplayResult, TargetStats } from '../types.js';
import { card, loading } from './common.js';
import { noAttempts } from './webhooks-health.js';

const HOUR = 3_600_000;

/**
 * The target page's health card: figures and the hourly chart, for the last 24 hours or 7 days. Without an attempt in
 * the window the chart would be an empty grey box: it says so instead (`createdAt` tells a new target from a quiet one).
 */
export function healthCard(id: string, alive: () => boolean, createdAt: string): HTMLElement {
  const content = h('div', null, loading());
  const range = select([{ value: '24', label: 'Last 24 hours' }, { value: '168', label: 'Last 7 days' }], { testid: 'health-range', 'aria-label': 'Time range' });
  const load = async () => {
    try {
      // A minute short of the limit: the server's "now" is a moment later than ours.
      const hours = Number(range.value);
      const since = new Date(Date.now() - hours * HOUR + (hours === 168 ? 60_000 : 0)).toISOString();
      const stats = await api.get<TargetStats>(`/webhooks/${seg(id)}/stats`, { since });
      if (!alive()) return;
      replace(content, healthFigures(stats), stats.attempts.total > 0 ? healthChart(stats.buckets)
        : h('p', { class: 'empty', testid: 'health-chart-empty' }, noAttempts(createdAt, hours * HOUR, 'health-none'),
          ' — each attempt to this target will show here, hour by hour.'));
    } catch (err) {
      if (alive()) replace(content, errorBanner(err));
    }
  };
  range.addEventListener('change', () => void load());
  void load();
  return card(h('span', { class: 'card-title-row' }, 'Health', range), content);
}

/** Recover dead jobs and replay missed events since a chosen time; the answer is shown in the page's banner. */
export function recoverReplayCard(id: string, show: (node: Node | null) => void, enabled: boolean): HTMLElement {
  const since = h('input', { type: 'datetime-local', required: true, value: localInputValue(Date.now() - 24 * HOUR), testid: 'recover-since' });
  const recover = button('Recover dead jobs', { class: 'btn', testid: 'recover-jobs' });
  const replay = button('Replay missed events', { class: 'btn', testid: 'replay-events' });
  const form = h('div', { class: 'recover-form' },
    field({ label: 'Since', id: 'recover-since', path: '/since', hint: 'Your local time. Replay starts no earlier than the delivered-jobs retention horizon.' }, since),
    h('div', { class: 'recover-actions' }, recover, replay));
  const run = (verb: 'recover' | 'replay') => async () => {
    const at = new Date(since.value);
    if (Number.isNaN(at.getTime())) {
      show(errorBanner(new Error('Choose a time to start from.')));
      return;
    }
    await busy(form, async () => {
      try {
        const res = await api.post<RecoverResult | ReplayResult>(`/webhooks/${seg(id)}/${verb}`, { since: at.toISOString() });
        const what = verb === 'recover' ? `${res.jobs} dead job${res.jobs === 1 ? '' : 's'} sent back for another round.` : `${res.jobs} job${res.jobs === 1 ? '' : 's'} created for missed events.`;
        show(notice(what, `${verb}-result`));
      } catch (err) {
        show(errorBanner(err));
      }
    });
  };
  recover.addEventListener('click', () => void run('recover')());
  replay.addEventListener('click', () => void run('replay')());
  return card('Recover and replay',
    h('p', { class: 'muted small' }, enabled
      ? 'Recover sends this target’s dead jobs created since then through another round of attempts. Replay creates jobs for events it missed (while disabled, or before it existed).'
      : 'Enable the target first: its jobs would only wait.'),
    form);
}
