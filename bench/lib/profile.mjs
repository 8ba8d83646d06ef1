import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// svc ships as one esbuild bundle (dist/svc.mjs): without its source map every bundled dependency (fastify, kysely,
// pino, …) and every svc file would show up as "svc.mjs". Frames in a file with a `.map` beside it are mapped back
// to the original file and line.
const maps = new Map();
function sourceMapFor(url) {
  if (!url || !url.startsWith('file://')) return null;
  if (maps.has(url)) return maps.get(url);
  let entry = null;
  try {
    const file = fileURLToPath(url);
    if (existsSync(`${file}.map`)) {
      const payload = JSON.parse(readFileSync(`${file}.map`, 'utf8'));
      entry = { map: new SourceMap(payload), base: resolve(dirname(file), payload.sourceRoot ?? '') };
    }
  } catch {}
  maps.set(url, entry);
  return entry;
}
/** The original file URL and 0-based line of a call frame (itself when there is no source map). */
function original(cf) {
  const sm = sourceMapFor(cf.url);
  if (!sm) return { url: cf.url, line: cf.lineNumber };
  const e = sm.map.findEntry(cf.lineNumber, cf.columnNumber);
  if (!e || !e.originalSource) return { url: cf.url, line: cf.lineNumber };
  const src = e.originalSource.startsWith('file://') ? e.originalSource : `file://${resolve(sm.base, e.originalSource)}`;
  return { url: src, line: e.originalLine };
}

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
  const src = url.indexOf('packages/server/src/');
  if (src >= 0) return `svc: ${url.slice(src + 'packages/server/src/'.length)}`;
  const pkg = url.indexOf('packages/');
  if (pkg >= 0) return `svc: ${url.slice(pkg)}`;
  if (url.startsWith('node:')) return 'node core';
  return url.replace(/^file:\/\//, '');
}

/** Where a function lives, for the by-function list: like owner(), but with the file inside a package. */
function place(url) {
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) return url.slice(nm + 'node_modules/'.length);
  return owner(url);
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
    const orig = original(cf);
    const where = orig.url ? `${place(orig.url)}:${orig.line + 1}` : '';
    const key = `${name} ${where}`.trim();
    fns.set(key, (fns.get(key) ?? 0) + us);
    const o = ['(idle)', '(program)', '(garbage collector)'].includes(name) ? name : owner(orig.url);
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
