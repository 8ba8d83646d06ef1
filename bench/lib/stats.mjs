/** Small statistics for rounds: medians and spread, never means of ratios. */

export function median(xs) {
  const v = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const m = Math.floor(v.length / 2);
  return v.length % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/** Spread as (max - min) / median, in percent: how far apart the rounds were. */
export function spreadPct(xs) {
  const v = xs.filter((x) => Number.isFinite(x));
  if (v.length < 2) return 0;
  const m = median(v);
  return m === 0 ? 0 : ((Math.max(...v) - Math.min(...v)) / m) * 100;
}

export function fmt(x, digits = 0) {
  if (!Number.isFinite(x)) return '—';
  if (Math.abs(x) >= 1000) return Math.round(x).toLocaleString('en-US');
  return x.toFixed(digits);
}
