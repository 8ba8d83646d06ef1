import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fmt, median, spreadPct } from './stats.mjs';

const unitFmt = (x, unit) => {
  if (!Number.isFinite(x)) return '—';
  if (unit === '×') return `${x.toFixed(2)}×`;
  if (unit === 'ms') return `${x < 10 ? x.toFixed(1) : fmt(x)} ms`;
  if (unit === 'MB') return `${fmt(x)} MB`;
  if (unit === 'µs') return `${x.toFixed(1)} µs`;
  return `${fmt(x)}${unit === 'req/s' ? ' req/s' : unit === '/s' ? '/s' : ''}`;
};

const withSpread = (xs, unit) => (xs && xs.length ? `${unitFmt(median(xs), unit)} ±${spreadPct(xs).toFixed(0)}%` : '—');

export function makeCells() {
  const cells = [];
  return {
    cells,
    ratioCell({ workload, measure, unit, baseline, svc, min, max, raw }) {
      const ratio = median(svc) / median(baseline);
      // Neither bound: a ratio shown to explain others, not a bar.
      const pass = min !== undefined ? ratio >= min : max !== undefined ? ratio <= max : null;
      const target = min !== undefined ? `≥ ${min}×` : max !== undefined ? `≤ ${max}×` : '—';
      cells.push({ kind: 'ratio', workload, measure, unit, baseline, svc, ratio, perRoundRatio: svc.map((s, i) => s / baseline[i]), target, pass, raw });
    },
    valueCell({ workload, measure, unit, rounds, value, min, max, target, raw, note }) {
      const pass = min !== undefined ? value >= min : max !== undefined ? value <= max : null;
      cells.push({ kind: 'value', workload, measure, unit, rounds, value, target, pass, raw, note });
    },
    skip(workload, reason) {
      cells.push({ kind: 'skipped', workload, measure: 'skipped', reason, pass: null });
    },
  };
}

/** Markdown table (also what the terminal shows). */
export function table(cells) {
  const rows = [['', 'measure', 'baseline (median ±spread)', 'svc (median ±spread)', 'svc ÷ baseline', 'target', '']];
  for (const c of cells) {
    if (c.kind === 'skipped') rows.push([c.workload, `skipped: ${c.reason}`, '', '', '', '', '—']);
    else if (c.kind === 'ratio') rows.push([c.workload, c.measure, withSpread(c.baseline, c.unit), withSpread(c.svc, c.unit), `${c.ratio.toFixed(2)}×`, c.target, c.pass === null ? '' : c.pass ? 'ok' : '**MISS**']);
    else {
      const v = c.rounds && c.rounds.length > 1 ? `${unitFmt(c.value, c.unit)} ±${spreadPct(c.rounds).toFixed(0)}%` : unitFmt(c.value, c.unit);
      rows.push([c.workload, c.measure, '—', v, '—', c.target ?? '—', c.pass === null ? '' : c.pass ? 'ok' : '**MISS**']);
    }
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r) => `| ${r.map((x, i) => x.padEnd(widths[i])).join(' | ')} |`;
  return [line(rows[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}

const START = '<!-- bench:latest:start -->';
const END = '<!-- bench:latest:end -->';

export function updateReadme(path, { command, date, resultsFile, tableText, machine, placement }) {
  if (!existsSync(path)) return false;
  const text = readFileSync(path, 'utf8');
  const a = text.indexOf(START);
  const b = text.indexOf(END);
  if (a < 0 || b < a) return false;
  const block = [
    START,
    `Made by \`${command}\` on ${date} (${machine}); every round in \`bench/results/${resultsFile}\`.`,
    `Placement: ${placement}.`,
    '',
    tableText,
    END,
  ].join('\n');
  writeFileSync(path, text.slice(0, a) + block + text.slice(b + END.length));
  return true;
}
