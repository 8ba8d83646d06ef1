import { h } from '../dom.js';
import type { TargetStats } from '../types.js';

/**
 * Successes and failures per hour as an inline SVG bar chart: no chart library, no script in the markup, colours from
 * the stylesheet (classes, never style attributes: the CSP forbids inline styles). The SVG scales with its box, so it
 * never makes a phone screen scroll sideways. Each bar carries a <title> for pointer and screen-reader users.
 */
const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 600;
const HEIGHT = 140;
const AXIS = 2;

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, ...children: Array<SVGElement | string>): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(typeof c === 'string' ? document.createTextNode(c) : c);
  return el;
}

const hourLabel = (iso: string): string => new Date(iso).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });

export function healthChart(buckets: TargetStats['buckets'], testid = 'health-chart'): HTMLElement {
  const max = Math.max(1, ...buckets.map((b) => b.succeeded + b.failed));
  const plot = HEIGHT - AXIS;
  const slot = WIDTH / Math.max(1, buckets.length);
  const barWidth = Math.max(1, slot * 0.7);
  const total = buckets.reduce((n, b) => n + b.succeeded + b.failed, 0);
  const chart = svg('svg', {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    class: 'health-chart',
    role: 'img',
    'aria-label': `Attempts per hour: ${total} in ${buckets.length} hours`,
    'data-testid': testid,
    preserveAspectRatio: 'none',
  });
  chart.append(svg('line', { x1: 0, y1: plot + 0.5, x2: WIDTH, y2: plot + 0.5, class: 'chart-axis' }));
  buckets.forEach((b, i) => {
    const x = i * slot + (slot - barWidth) / 2;
    const okHeight = (b.succeeded / max) * (plot - 4);
    const failHeight = (b.failed / max) * (plot - 4);
    const group = svg('g', { class: 'chart-bar', 'data-testid': 'health-bar', 'data-succeeded': b.succeeded, 'data-failed': b.failed },
      svg('title', {}, `${hourLabel(b.start)}: ${b.succeeded} succeeded, ${b.failed} failed`));
    if (b.succeeded > 0) group.append(svg('rect', { x, y: plot - okHeight, width: barWidth, height: okHeight, class: 'chart-ok' }));
    if (b.failed > 0) group.append(svg('rect', { x, y: plot - okHeight - failHeight, width: barWidth, height: failHeight, class: 'chart-failed' }));
    chart.append(group);
  });
  // Hour labels in HTML under the chart: SVG text would stretch with the chart's width.
  const labels = [...new Set([0, Math.floor(buckets.length / 2), buckets.length - 1])].flatMap((i) => (buckets[i] ? [h('span', null, hourLabel(buckets[i]!.start))] : []));
  return h('figure', { class: 'health-chart-wrap' }, chart, h('figcaption', { class: 'chart-labels muted small' }, labels),
    h('p', { class: 'chart-legend small' }, h('span', { class: 'legend-ok' }, 'succeeded'), ' ', h('span', { class: 'legend-failed' }, 'failed')));
}
