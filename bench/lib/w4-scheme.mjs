import Database from 'better-sqlite3';
import { query } from './pg.mjs';
import { drainWithSvc, seedTemplate } from './w4-deliver.mjs';

/** Switches every target of a copy to `scheme` before the clock starts (its secrets are new-format: made by the API). */
const toScheme = (kind, scheme) => async (url) => {
  const statement = `update webhooks set signature_scheme = '${scheme}'`;
  if (kind === 'pg') return void (await query(url, statement));
  const db = new Database(url.slice('sqlite:'.length));
  try {
    db.exec(statement);
  } finally {
    db.close();
  }
};

/**
 * W4S: W4's drain (1 `svc worker`, 1 target) signing with `signatureScheme: "both"` (SPEC §13: one more HMAC and three
 * more headers an attempt) against the same drain of the same copy with the default `svc` scheme. Target ≥ 0.9×.
 */
export async function w4Scheme(ctx, receiver, kinds) {
  const { opts } = ctx;
  for (const kind of kinds) {
    const name = `w4s_${kind}`;
    const tpl = await seedTemplate(ctx, { kind, name, targets: 1, jobs: opts.jobs, receiver });
    const rounds = { svc: [], both: [] };
    for (let r = 1; r <= opts.rounds; r++) {
      for (const side of ['svc', 'both']) {
        const res = await drainWithSvc(ctx, tpl, receiver, { label: `${name}-${side}`, prepare: side === 'both' ? toScheme(kind, 'both') : null });
        res.rate = res.count / res.seconds;
        rounds[side].push(res);
        ctx.progress('W4S', `${kind} round ${r}/${opts.rounds} scheme ${side.padEnd(4)} ${Math.round(res.rate)} deliveries/s (${res.count} in ${res.seconds.toFixed(2)} s)${res.partial ? ` — STOPPED at the ${opts.drainTimeoutMs / 1000} s limit` : ''}`);
      }
    }
    ctx.ratioCell({
      workload: 'W4S',
      measure: `drain ${tpl.count} jobs to 1 target, ${kind === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, signatureScheme both vs svc, deliveries/s`,
      unit: '/s',
      baseline: rounds.svc.map((x) => x.rate),
      svc: rounds.both.map((x) => x.rate),
      min: 0.9,
      raw: rounds,
    });
  }
}
