import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Where a sampled function lives: a package, a file of svc's build, or Node itself. */
function owner(url) {
  if (!url) return '(native / VM)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0].startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
  }
  const dist = url.indexOf('packages/server/dist/');
  if (dist >= 0) return `svc: ${url.slice(dist + 'packages/server/dist/'.length)}`;
  if (url.startsWith('node:')) return 'node core';
  return url.replace(/^file:\/\//, '');
}

/** Self time by function and by owner from a V8 .cpuprofile. */
export function summarizeProfile(file, top = 25) {
  const prof = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map();
  let total = 0;
  for (let i = 0; i < prof.samples.length; i++) {
    const dt = prof.timeDeltas[i] ?? 0;
    self.set(prof.samples[i], (self.get(prof.samples[i]) ?? 0) + dt);
    total += dt;
  }
  const fns = new Map();
  const owners = new Map();
  for (const [id, us] of self) {
    const { callFrame: cf } = byId.get(id);
    const name = cf.functionName || '(anonymous)';
    const where = cf.url ? `${owner(cf.url)}:${cf.lineNumber + 1}` : '';
    const key = `${name} ${where}`.trim();
    fns.set(key, (fns.get(key) ?? 0) + us);
    const o = ['(idle)', '(program)', '(garbage collector)'].includes(name) ? name : owner(cf.url);
    owners.set(o, (owners.get(o) ?? 0) + us);
  }
  const idle = owners.get('(idle)') ?? 0;
  const busy = total - idle;
  const rows = (m) =>
    [...m.entries()]
      .filter(([k]) => k !== '(idle)')
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([k, us]) => `${((us / busy) * 100).toFixed(1).padStart(5)}%  ${k}`);
  return { busySeconds: busy / 1e6, idleSeconds: idle / 1e6, functions: rows(fns), owners: rows(owners) };
}

export function summarizeDir(dir, label) {
  const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  const out = [];
  for (const f of files) {
    const s = summarizeProfile(join(dir, f));
    out.push(`### ${label} — ${f}\nbusy ${s.busySeconds.toFixed(1)} s, idle ${s.idleSeconds.toFixed(1)} s (share of busy time, self)\n\nby package / file:\n${s.owners.slice(0, 15).join('\n')}\n\nby function:\n${s.functions.join('\n')}\n`);
  }
  return out.join('\n');
}

export function writeSummary(path, text) {
  writeFileSync(path, text);
}
