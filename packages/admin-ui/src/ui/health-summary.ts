import { h, time } from '../dom.js';
import type { TargetStats } from '../types.js';

/** The health figures of a target as a row of labelled numbers. */
export const percent = (rate: number | null): string => {
  if (rate === null) return '—';
  const p = rate * 100;
  return `${Number.isInteger(p) ? p : p.toFixed(1)} %`;
};
const ms = (v: number | null): string => (v === null ? '—' : `${v} ms`);

export function healthFigures(stats: TargetStats): HTMLElement {
  const figure = (label: string, value: Node | string, testid: string) =>
    h('div', { class: 'figure' }, h('div', { class: 'figure-label' }, label), h('div', { class: 'figure-value', testid }, value));
  return h('div', { class: 'figures', testid: 'health-figures' },
    figure('Success rate', percent(stats.successRate), 'health-success-rate'),
    figure('Attempts', `${stats.attempts.succeeded} ok · ${stats.attempts.failed} failed`, 'health-attempts'),
    figure('Latency p50', ms(stats.latencyMs.p50), 'health-p50'),
    figure('Latency p95', ms(stats.latencyMs.p95), 'health-p95'),
    figure('Last success', time(stats.lastSuccessAt), 'health-last-success'),
    figure('Last failure', time(stats.lastFailureAt), 'health-last-failure'));
}

/** What an attempt's connection cost, phase by phase; phases that did not happen are left out. */
export function timingsText(t: { dnsMs: number | null; connectMs: number | null; tlsMs: number | null; firstByteMs: number | null }): string {
  const parts = [['DNS', t.dnsMs], ['connect', t.connectMs], ['TLS', t.tlsMs], ['first byte', t.firstByteMs]] as const;
  const shown = parts.filter(([, v]) => v !== null).map(([name, v]) => `${name} ${v} ms`);
  return shown.length ? shown.join(' · ') : '—';
}
