import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startOtlpCollector } from '../helpers/otlp-collector.js';
import { freePort } from '../helpers/server.js';
import { waitFor } from '../helpers/wait.js';

// The command's bundle (build.mjs) is split so that a process reads only what it runs: `svc worker` never parses
// the HTTP layer, and no process parses a broker's client, the OpenTelemetry SDK or PostgreSQL's client it was not
// configured for. Of undici and prom-client only the parts used are bundled (undici-parts.d.ts, prom-client-parts.d.ts):
// their indexes load fetch, WebSocket, the Pushgateway and the default metrics. What a
// process reads at start is dist/svc.mjs and the chunks it imports statically; each file's source map names the
// sources in it.
const DIST = fileURLToPath(new URL('../../dist/', import.meta.url));
const ENTRY = join(DIST, 'svc.mjs');

/**
 * The files a process reads before its first line of code runs: the entry and every chunk imported statically; with
 * `dynamic`, also every chunk an `import()` can load later (the whole bundle).
 */
function closure(entry: string, dynamic = false): string[] {
  const seen = new Set<string>();
  const stack = [entry];
  while (stack.length > 0) {
    const file = stack.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const code = readFileSync(file, 'utf8');
    // esbuild writes static imports as `} from "./x.mjs";` or `import "./x.mjs";` at the start of a line.
    for (const m of code.matchAll(/^(?:\} from|import(?: [\w${},\s*]+ from)?) "(\.[^"]+\.mjs)";$/gm)) stack.push(join(dirname(file), m[1]!));
    if (dynamic) for (const m of code.matchAll(/\bimport\("(\.[^"]+\.mjs)"\)/g)) stack.push(join(dirname(file), m[1]!));
  }
  return [...seen];
}

const sourcesOf = (files: string[]): string[] =>
  files.flatMap((f) => (JSON.parse(readFileSync(`${f}.map`, 'utf8')) as { sources: string[] }).sources.map((s) => join(dirname(f), s)));

const NOT_AT_START = /node_modules\/(fastify|ajv|@fastify|find-my-way|fast-json-stringify|@opentelemetry\/(sdk-trace|exporter|otlp|resources)|redis|@redis|amqplib|@nats-io|pg|pg-pool|pg-protocol)\/|node_modules\/undici\/lib\/(web\/(fetch\/index|fetch\/response|websocket|eventsource|cookies|cache)|mock|cache)\b|node_modules\/prom-client\/(index\.js|lib\/pushgateway|lib\/defaultMetrics)/;

describe.skipIf(!existsSync(ENTRY))('the command bundle is split by what a process runs', () => {
  const atStart = sourcesOf(closure(ENTRY));
  const all = sourcesOf(closure(ENTRY, true));

  it('what svc worker reads at start holds the worker and the database layer', () => {
    const rel = atStart.map((s) => relative(DIST, s));
    expect(rel.some((s) => s.endsWith('src/webhooks/worker/worker.ts'))).toBe(true);
    expect(rel.some((s) => s.endsWith('src/db/connect.ts'))).toBe(true);
    expect(rel.some((s) => /node_modules\/undici\//.test(s))).toBe(true);
  });

  it('and none of the HTTP layer, the OpenTelemetry SDK, a broker client, PostgreSQL\'s or a one-shot command\'s, which are chunks loaded when used', () => {
    expect(atStart.filter((s) => NOT_AT_START.test(s))).toEqual([]);
    expect(atStart.some((s) => s.endsWith('src/app.ts'))).toBe(false);
    // Nor what only a one-shot command runs: password hashing (a native addon, @node-rs/argon2) for `svc admin
    // create`, and `svc backup`/`restore`.
    for (const file of ['src/auth/passwords.ts', 'src/auth/setup.ts', 'src/backup.ts']) expect(atStart.some((s) => s.endsWith(file)), file).toBe(false);
    // They are in the bundle, in the chunks dynamic imports name.
    for (const pkg of ['fastify', 'pg', '@redis/client', 'amqplib', '@nats-io/nats-core', 'ajv', '@opentelemetry/sdk-trace-base']) expect(all.some((s) => s.includes(`node_modules/${pkg}/`)), pkg).toBe(true);
    expect(all.some((s) => s.endsWith('src/app.ts'))).toBe(true);
  });
});

// What a chunk reads through a dynamic import() of a CommonJS package (@fastify/cookie's `cookie`, the OTLP
// exporters) has its named exports (build.mjs, cjs-named-exports): the built command logs an admin in (a cookie is
// set) and exports its request spans.
describe.skipIf(!existsSync(ENTRY))('the built command through its lazily loaded chunks', () => {
  it('svc serve with OTEL_* set: an admin logs in and the request spans reach the collector', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-bundle-'));
    const collector = await startOtlpCollector();
    const port = await freePort();
    const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_') && !k.startsWith('OTEL_')));
    const child = spawn(process.execPath, [ENTRY, 'serve'], {
      env: {
        ...clean,
        SVC_DATABASE_URL: `sqlite:${join(dir, 'svc.db')}`,
        SVC_PORT: String(port),
        SVC_SECRET_KEY: 'cd'.repeat(32),
        SVC_ADMIN_EMAIL: 'bundle@example.com',
        SVC_ADMIN_PASSWORD: 'long enough password',
        SVC_LOG_LEVEL: 'warn',
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_BSP_SCHEDULE_DELAY: '50',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d));
    try {
      await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.status === 200 || null, `readyz (${stderr})`, 30_000, 100);
      const login = await waitFor(async () => {
        const res = await fetch(`http://127.0.0.1:${port}/admin/v1/session`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ email: 'bundle@example.com', password: 'long enough password' }),
        });
        return res.status === 401 ? null : res;
      }, 'the bootstrap admin', 10_000, 100);
      expect(login.status).toBe(200);
      expect(login.headers.get('set-cookie')).toMatch(/^svc_admin=/);
      expect((await fetch(`http://127.0.0.1:${port}/api/v1/capabilities`)).status).toBe(200);
      const span = await waitFor(() => collector.spans.find((s) => s.attributes['http.route'] === '/api/v1/capabilities'), 'the request span', 10_000);
      expect(span.kind).toBe(2);
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('close', r));
      await collector.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
