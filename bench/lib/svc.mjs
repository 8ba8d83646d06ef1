import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { CORES, freePort, spawnOn, stop, waitHttp } from './proc.mjs';

// BENCH_SVC_MAIN runs another build's bundle in svc's place (a worktree of an earlier commit, to compare before and after).
export const SVC_MAIN = process.env.BENCH_SVC_MAIN ?? fileURLToPath(new URL('../../packages/server/dist/svc.mjs', import.meta.url));
/** The Node flags svc's command line names (`#!/usr/bin/env -S node …`): the bench runs svc as the `svc` command runs. */
export const svcNodeFlags = (main = SVC_MAIN) => readFileSync(main, 'utf8').slice(0, 200).split('\n')[0].split(/\s+/).filter((a) => a.startsWith('--'));
export const ADMIN = { email: 'bench@example.com', password: 'bench-password-123' };
// A fixed per-run key: the shipped default makes a key file beside the SQLite database; a fixed one lets a
// seeded database be copied for every round.
export const SECRET_KEY = 'a1'.repeat(32);

/**
 * Starts `svc serve|serve --no-worker|worker` on the server core. stdout (info-level JSON logs, the shipped default)
 * goes to /dev/null unless a log file is given.
 */
export async function startSvc({ main = SVC_MAIN, mode = 'serve', databaseUrl, tls = null, env = {}, logFile = null, cpuProfDir = null, waitReady = true, core = CORES.server }) {
  const port = await freePort();
  const args = [process.execPath, ...svcNodeFlags(main)];
  if (cpuProfDir) args.push('--cpu-prof', `--cpu-prof-dir=${cpuProfDir}`);
  args.push(main, ...(mode === 'worker' ? ['worker'] : mode === 'api' ? ['serve', '--no-worker'] : ['serve']));
  const child = spawnOn(core, args, {
    logFile,
    env: {
      SVC_DATABASE_URL: databaseUrl,
      SVC_HOST: '127.0.0.1',
      SVC_PORT: String(port),
      SVC_SECRET_KEY: SECRET_KEY,
      SVC_ADMIN_EMAIL: ADMIN.email,
      SVC_ADMIN_PASSWORD: ADMIN.password,
      SVC_WEBHOOK_ALLOW_CIDRS: '127.0.0.0/8',
      ...(tls ? { SVC_WEBHOOK_CA_FILE: tls.certFile } : {}),
      ...env,
    },
  });
  const url = `http://127.0.0.1:${port}`;
  const svc = { child, url, port, pid: child.pid, stop: () => stop(child) };
  if (waitReady && mode !== 'worker') svc.readyMs = await waitHttp(`${url}/readyz`, { timeoutMs: 60_000, child });
  return svc;
}

async function call(url, method, path, { body, headers = {} } = {}) {
  const res = await fetch(url + path, {
    method,
    headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status}: ${text.slice(0, 500)}`);
  return { res, json: text ? JSON.parse(text) : null };
}

/** Logs in as the bootstrap admin; returns helpers for the admin calls the bench needs. */
export async function admin(url) {
  // /readyz can answer before the bootstrap admin exists (svc creates it after listen): retry a 401 briefly.
  let login;
  for (let i = 0; i < 50; i++) {
    try {
      login = await call(url, 'POST', '/admin/v1/session', { body: ADMIN });
      break;
    } catch (err) {
      if (i === 49 || !String(err.message).includes('→ 401')) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const { res, json } = login;
  const cookie = res.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const headers = { cookie, 'x-svc-csrf': json.csrfToken };
  return {
    collection: (name) =>
      call(url, 'POST', '/admin/v1/collections', {
        headers,
        body: { name, fields: [{ name: 'title', type: 'text', required: true }, { name: 'body', type: 'text', required: false }, { name: 'n', type: 'integer', required: false }] },
      }).then((r) => r.json),
    /** A collection with the given fields (W11: indexed ones). */
    collectionWith: (name, fields) => call(url, 'POST', '/admin/v1/collections', { headers, body: { name, fields } }).then((r) => r.json),
    token: (scopes = ['records:read', 'records:write']) => call(url, 'POST', '/admin/v1/tokens', { headers, body: { name: 'bench', scopes, collections: null } }).then((r) => r.json.token),
    webhook: (hookUrl, i = 0, extra = {}) => call(url, 'POST', '/admin/v1/webhooks', { headers, body: { name: `bench-${i}`, url: hookUrl, topics: ['record.created'], ...extra } }).then((r) => r.json),
  };
}

const FILLER = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. ';

/** A record's data, about 1 KB of JSON. */
export function recordData(n) {
  const title = `record ${n}`;
  let body = '';
  while (body.length < 940) body += FILLER;
  return { title, body: body.slice(0, 940), n };
}

/** Creates `count` records through the public API (so every row, event and job is real), `concurrency` at a time. */
export async function seedRecords(url, token, collection, count, { concurrency = 32, timeoutMs = 600_000 } = {}) {
  const pool = new Pool(url, { connections: concurrency, pipelining: 1 });
  const t0 = performance.now();
  let next = 0;
  let failed = 0;
  const worker = async () => {
    while (next < count && performance.now() - t0 < timeoutMs) {
      const n = next++;
      const res = await pool.request({
        path: `/api/v1/collections/${collection}/records`,
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ data: recordData(n) }),
      });
      await res.body.dump();
      if (res.statusCode !== 201) failed++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  await pool.close();
  if (failed > 0 || next < count) throw new Error(`seeding: ${failed} of ${count} creates failed (${next} attempted)`);
  return { count, seconds: (performance.now() - t0) / 1000 };
}
