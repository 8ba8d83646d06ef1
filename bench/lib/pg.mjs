import pg from 'pg';

export const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const created = new Set();

async function withAdmin(fn) {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

export const dbUrl = (name) => {
  const u = new URL(PG_ADMIN_URL);
  u.pathname = `/${name}`;
  return u.toString();
};

export async function pgAvailable() {
  try {
    return await withAdmin(async (c) => {
      const r = await c.query("select version() as v, current_setting('synchronous_commit') as sc, current_setting('shared_buffers') as sb, current_setting('fsync') as fs");
      return r.rows[0];
    });
  } catch (err) {
    return null;
  }
}

/**
 * A fresh database (optionally a copy of a template that nobody is connected to). A copy is made file by file and
 * followed by a checkpoint: PostgreSQL 15's default copy writes every page to the WAL, and the checkpoint and
 * write-back that follow would otherwise run during the measured drain, slowing svc (the baselines use no database).
 */
export async function createDb(name, template = null) {
  await withAdmin(async (c) => {
    await c.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template} STRATEGY = FILE_COPY` : ''}`);
    if (template) await c.query('CHECKPOINT');
  });
  created.add(name);
  return dbUrl(name);
}

export async function dropDb(name) {
  await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  created.delete(name);
}

export async function dropAll() {
  for (const name of [...created]) await dropDb(name).catch(() => {});
}

export async function query(url, text, params = []) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text, params)).rows;
  } finally {
    await c.end();
  }
}
