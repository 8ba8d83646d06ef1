/**
 * A target's last hours in a table cell: one thin bar per hourly bucket of GET /admin/v1/webhooks/{id}/stats,
 * successes below failures, as inline SVG (classes for colour: the CSP forbids style attributes). The full-size chart
 * of the target page is ui/health-chart.ts; this one has no axis labels and one accessible summary.
 */
import type { TargetStats } from '../types.js';

const NS = 'http://www.w3.org/2000/svg';
/** 4 units per hour: 25 buckets make 100 × 24, drawn at 6.5 × 1.5 rem. */
const SLOT = 4;
const HEIGHT = 24;

export function sparkline(buckets: TargetStats['buckets'], summary: string): SVGSVGElement {
  const width = Math.max(1, buckets.length) * SLOT;
  const max = Math.max(1, ...buckets.map((b) => b.succeeded + b.failed));
  const chart = document.createElementNS(NS, 'svg');
  for (const [k, v] of Object.entries({ viewBox: `0 0 ${width} ${HEIGHT}`, class: 'sparkline', role: 'img', 'aria-label': summary, preserveAspectRatio: 'none', 'data-testid': 'health-sparkline' })) {
    chart.setAttribute(k, v);
  }
  const title = document.createElementNS(NS, 'title');
  title.textContent = summary;
  chart.append(title);
  const rect = (x: number, y: number, height: number, cls: string) => {
    const r = document.createElementNS(NS, 'rect');
    r.setAttribute('x', String(x));
    r.setAttribute('y', String(y));
    r.setAttribute('width', String(SLOT - 1));
    r.setAttribute('height', String(height));
    r.setAttribute('class', cls);
    chart.append(r);
  };
  buckets.forEach((b, i) => {
    // A bucket with any attempt is at least 2 units high, so one attempt among hundreds still shows.
    const scale = (n: number) => (n === 0 ? 0 : Math.max(2, (n / max) * (HEIGHT - 1)));
    const ok = scale(b.succeeded);
    const failed = scale(b.failed);
    if (ok > 0) rect(i * SLOT, HEIGHT - ok, ok, 'chart-ok');
    if (failed > 0) rect(i * SLOT, Math.max(0, HEIGHT - ok - failed), Math.min(failed, HEIGHT - ok), 'chart-failed');
  });
  return chart;
}
