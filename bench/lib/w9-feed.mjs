import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CORES, runJson } from './proc.mjs';
import { createDb } from './pg.mjs';
import { admin, seedRecords, startSvc } from './svc.mjs';

const PAGE = 1000;
const READER = fileURLToPath(new URL('./w9-reader-child.mjs', import.meta.url));

/** W9: catch up on the feed (opts.feedEvents events, pages of 1,000) through the API vs a raw SQL loop; both dialects. */
export async function w9(ctx, kinds) {
  const { opts } = ctx;
  for (const kind of kinds) {
    const dir = ctx.dir(`w9-${kind}`);
    const dbPath = join(dir, 'svc.db');
    const databaseUrl = kind === 'sqlite' ? `sqlite:${dbPath}` : await createDb(`${ctx.pgPrefix}_w9`);
    const svc = await startSvc({ mode: 'api', databaseUrl, tls: ctx.tls, logFile: ctx.logFile(`w9-${kind}`), env: { SVC_SQLITE_SYNCHRONOUS: 'NORMAL' } });
    try {
      const a = await admin(svc.url);
      await a.collection('bench');
      const writer = await a.token();
      const reader = await a.token(['events:read']);
      ctx.progress('W9', `${kind}: seeding ${opts.feedEvents} events through the API`);
      const seeded = await seedRecords(svc.url, writer, 'bench', opts.feedEvents);
      ctx.progress('W9', `${kind}: seeded in ${seeded.seconds.toFixed(1)} s`);
      ctx.progress('W9', `${kind}: warm-up ${opts.warmup} s, then ${opts.rounds} rounds (API, raw SQL), in a reader process on the load core`);
      const cfg = { url: svc.url, token: reader, kind, databaseUrl, dbPath, page: PAGE, rounds: opts.rounds, warmupSeconds: opts.warmup };
      const out = await runJson(CORES.load, [process.execPath, READER, JSON.stringify(cfg)], { timeoutMs: 600_000 });
      const api = [];
      const raw = [];
      out.api.forEach((x, i) => {
        const y = out.raw[i];
        if (x.count !== opts.feedEvents || y.count !== opts.feedEvents) throw new Error(`read ${x.count} (API) and ${y.count} (SQL) of ${opts.feedEvents} events`);
        api.push(x.count / x.seconds);
        raw.push(y.count / y.seconds);
        ctx.progress('W9', `${kind} round ${i + 1}/${opts.rounds}: API ${Math.round(api.at(-1))} events/s, raw SQL ${Math.round(raw.at(-1))} events/s`);
      });
      ctx.ratioCell({ workload: 'W9', measure: `feed catch-up ${kind}, events/s (pages of ${PAGE})`, unit: '/s', baseline: raw, svc: api, min: 0.6 });
    } finally {
      await svc.stop();
    }
  }
}
