import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { load } from './load.mjs';
import { createDb } from './pg.mjs';
import { summarizeDir } from './profile.mjs';
import { admin, recordData, seedRecords, startSvc } from './svc.mjs';

/**
 * `--profile`: svc alone under W1 (list, limit=50), W2 (create, SQLite) and W4 (drain: SQLite with 1 and 10 targets,
 * PostgreSQL with 1) with `node --cpu-prof`, then self time by file and function. Not part of the timed suite.
 */
export async function profileRun(ctx, receiver, outDir) {
  const { opts } = ctx;
  const sections = [];
  const profDir = (name) => {
    const d = join(outDir, name);
    mkdirSync(d, { recursive: true });
    return d;
  };
  // W1 + W2 on one SQLite database: svc serve --no-worker with a target that is never delivered to.
  {
    const dir = ctx.dir('prof-api');
    const url = `sqlite:${join(dir, 'svc.db')}`;
    const seeder = await startSvc({ mode: 'api', databaseUrl: url, tls: ctx.tls, env: { SVC_SQLITE_SYNCHRONOUS: 'NORMAL' } });
    const a = await admin(seeder.url);
    await a.collection('bench');
    const token = await a.token();
    await seedRecords(seeder.url, token, 'bench', 2000);
    await seeder.stop();
    for (const [name, cfg] of [
      ['w1-list', { path: '/api/v1/collections/bench/records?limit=50', method: 'GET' }],
      ['w2-create', { path: '/api/v1/collections/bench/records', method: 'POST', body: JSON.stringify({ data: recordData(1) }) }],
    ]) {
      const d = profDir(name);
      const svc = await startSvc({ mode: 'api', databaseUrl: url, tls: ctx.tls, cpuProfDir: d });
      if (name === 'w2-create') await (await admin(svc.url)).webhook('https://127.0.0.1:9/hook');
      ctx.progress('profile', `${name}: ${opts.duration} s of load on svc with --cpu-prof`);
      const r = await load({ url: svc.url + cfg.path, method: cfg.method, body: cfg.body, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, connections: 64, duration: opts.duration });
      await svc.stop();
      sections.push(`## ${name}: ${Math.round(r.rps)} req/s, p99 ${r.latency.p99} ms\n\n${summarizeDir(d, name)}`);
    }
  }
  // W4's cells with a receiver port per target; each record makes one job per target.
  for (const [kind, targets] of [['sqlite', 1], ['sqlite', 10], ['pg', 1]]) {
    const name = `w4-drain-${kind}${targets > 1 ? `-${targets}-targets` : ''}`;
    const records = Math.ceil(opts.profileJobs / targets);
    const jobs = records * targets;
    const dir = ctx.dir(`prof-${name}`);
    const url = kind === 'sqlite' ? `sqlite:${join(dir, 'svc.db')}` : await createDb(`${ctx.pgPrefix}_prof`);
    const seeder = await startSvc({ mode: 'api', databaseUrl: url, tls: ctx.tls, env: { SVC_SQLITE_SYNCHRONOUS: 'NORMAL' } });
    const a = await admin(seeder.url);
    await a.collection('bench');
    const token = await a.token();
    for (const url of receiver.urls.slice(0, targets)) await a.webhook(url);
    await seedRecords(seeder.url, token, 'bench', records);
    await seeder.stop();
    const d = profDir(name);
    const done = receiver.expect(jobs, { timeoutMs: 120_000 });
    const t0 = performance.now();
    const w = await startSvc({ mode: 'worker', databaseUrl: url, tls: ctx.tls, cpuProfDir: d });
    ctx.progress('profile', `${name}: draining ${jobs} jobs with --cpu-prof`);
    let rate = 'timed out';
    try {
      await done;
      rate = `${Math.round(jobs / ((performance.now() - t0) / 1000))} deliveries/s`;
    } catch {}
    await w.stop();
    sections.push(`## ${name}: ${rate}\n\n${summarizeDir(d, name)}`);
  }
  const text = `# svc CPU profiles (${new Date().toISOString()})\n\n${sections.join('\n')}`;
  writeFileSync(join(outDir, 'summary.md'), text);
  return text;
}
