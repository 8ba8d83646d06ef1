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

/** A fresh database (optionally a copy of a template that nobody is connected to). */
export async function createDb(name, template = null) {
  await withAdmin((c) => c.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`));
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
