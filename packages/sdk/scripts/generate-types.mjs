#!/usr/bin/env node
// Regenerates the client's types from the OpenAPI documents svc itself publishes: src/client/openapi.ts from
// /api/v1/openapi.json (the public client) and src/client/admin-openapi.ts from /admin/v1/openapi.json (svc-sdk/admin).
// Dev-time only: `npm run generate -w packages/sdk`. It is deliberately not part of `build`, because the root build
// compiles the sdk before the server and the sdk must never need the server to build.
//
//   node scripts/generate-types.mjs                  start svc from its TypeScript sources (tsx), fetch, write
//   node scripts/generate-types.mjs --server dist    start the built server (packages/server/dist) instead
//   node scripts/generate-types.mjs --server-root D  start the sources of another checkout's packages/server (a git
//                                                    worktree at HEAD, so uncommitted routes stay out of the types)
//   node scripts/generate-types.mjs --url URL        read the documents of an svc that is already running; the admin
//                                                    one needs SVC_ADMIN_TOKEN (an svcadm_… token with admin:read)
//   node scripts/generate-types.mjs --check          write nothing; exit 1 when a committed file differs
//
// The admin document sits behind the admin session: the svc this script starts gets a first admin from
// `svc admin create` before it serves, and the script logs in as that admin.
//
// The drift tests (test/client-drift.test.ts, test/admin-client-drift.test.ts) import typesFromDocument() from here,
// so the committed files and the tests agree on every option by construction.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import openapiTS, { astToString } from 'openapi-typescript';

const sdkRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const serverRoot = resolve(sdkRoot, '../server');

/**
 * The documents and where their types live: .ts files (not .d.ts) so tsc emits their declarations into dist/ with
 * the client. Both stay in src/client/ because the tests' build check (test/helpers/sdk-build.ts) watches that folder.
 */
export const DOCUMENTS = {
  public: {
    path: '/api/v1/openapi.json',
    output: join(sdkRoot, 'src/client/openapi.ts'),
    drift: 'test/client-drift.test.ts',
  },
  admin: {
    path: '/admin/v1/openapi.json',
    output: join(sdkRoot, 'src/client/admin-openapi.ts'),
    drift: 'test/admin-client-drift.test.ts',
  },
};

/** The public client's types (the name the first drift test imports). */
export const OUTPUT = DOCUMENTS.public.output;

/** @param {keyof typeof DOCUMENTS} kind */
const header = (kind) => `/**
 * Generated from svc's own ${DOCUMENTS[kind].path} by packages/sdk/scripts/generate-types.mjs. Do not edit:
 * run \`npm run generate -w packages/sdk\`. ${DOCUMENTS[kind].drift} fails when this file and the document differ.
 */

`;

/**
 * The document as the sdk sees it. `servers` names the origin of whichever svc answered (its port differs on every
 * test run) and is no part of the API's shape, so it is dropped to keep the output reproducible.
 * @param {Record<string, unknown>} document
 */
export function normalizeDocument(document) {
  const { servers: _servers, ...rest } = structuredClone(document);
  return rest;
}

/**
 * TypeScript source of `paths`, `components` and `operations` for an OpenAPI 3.1 document.
 * @param {Record<string, unknown>} document
 * @param {keyof typeof DOCUMENTS} [kind] which document it is (only the header differs)
 * @returns {Promise<string>}
 */
export async function typesFromDocument(document, kind = 'public') {
  // `silent`: the Redocly lint warnings belong to the server's tests (test/integration/openapi.test.ts), not here.
  const ast = await openapiTS(/** @type {any} */ (normalizeDocument(document)), { silent: true });
  return header(kind) + astToString(ast);
}

/**
 * Line endings and trailing blanks are the only differences a formatter or a checkout may introduce.
 * @param {string} source
 */
export function normalizeSource(source) {
  return source
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trim();
}

async function freePort() {
  return new Promise((resolvePort, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (s.address());
      s.close(() => resolvePort(port));
    });
  });
}

/**
 * The node arguments that run one svc command.
 * @param {{ from: 'source' | 'dist', root: string }} server
 * @param {string[]} command
 */
function serverCommand(server, command) {
  if (server.from === 'dist') {
    const main = join(server.root, 'dist/svc.mjs');
    if (!existsSync(main)) throw new Error(`${main} does not exist: run \`npm run build\` first, or omit --server dist`);
    return [main, ...command];
  }
  // tsx runs the server's sources as they are now, so a route edited a minute ago is in the document.
  return ['--import', import.meta.resolve('tsx'), join(server.root, 'src/cli/main.ts'), ...command];
}

/** An address no mail reaches (RFC 2606) and a password used once, for the admin of a database deleted afterwards. */
const GENERATOR_ADMIN = { email: 'generator@svc.invalid', password: randomBytes(18).toString('base64url') };

/**
 * Starts svc on a throwaway SQLite database with one admin, hands its base URL to `use`, and stops it again whatever
 * happens.
 * @template T
 * @param {{ from: 'source' | 'dist', root: string }} server
 * @param {(baseUrl: string) => Promise<T>} use
 * @returns {Promise<T>}
 */
async function withServer(server, use) {
  const dir = await mkdtemp(join(tmpdir(), 'svc-sdk-generate-'));
  const port = await freePort();
  // Only what this run sets: an SVC_DATABASE_URL (or any other SVC_*) from the caller's shell must not leak in.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SVC_')));
  Object.assign(env, {
    SVC_DATABASE_URL: `sqlite:${join(dir, 'svc.db')}`,
    SVC_HOST: '127.0.0.1',
    SVC_PORT: String(port),
    SVC_LOG_LEVEL: 'warn',
  });
  try {
    // Before serve, so the database never waits for a setup link. `svc migrate` creates the database first: `svc admin
    // create` refuses a SQLite path that holds no database (a mistyped path made an empty one).
    const { email, password } = GENERATOR_ADMIN;
    await promisify(execFile)(process.execPath, serverCommand(server, ['migrate']), { cwd: dir, env, timeout: 120_000 });
    await promisify(execFile)(process.execPath, serverCommand(server, ['admin', 'create', '--email', email, '--password', password]), {
      cwd: dir,
      env,
      timeout: 120_000,
    });
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw new Error(`svc admin create failed: ${/** @type {{ stderr?: string }} */ (error).stderr || error}`);
  }
  const child = spawn(process.execPath, serverCommand(server, ['serve']), { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  /** @type {Promise<number | null>} */
  const exited = new Promise((r) => child.once('exit', (code) => r(code)));
  let running = true;
  void exited.then(() => (running = false));
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (!running) throw new Error(`svc exited before it was ready:\n${stderr}`);
      const ready = await fetch(`${baseUrl}/readyz`).then((r) => r.ok, () => false);
      if (ready) break;
      if (Date.now() > deadline) throw new Error(`svc was not ready within 60 s:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    return await use(baseUrl);
  } finally {
    if (running) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Headers that let a request read the admin document: an admin token, or a session of the given admin (cookie and
 * CSRF token, as the admin UI sends them).
 * @param {string} baseUrl
 * @param {{ token: string } | { email: string, password: string }} credentials
 * @returns {Promise<Record<string, string>>}
 */
export async function adminHeaders(baseUrl, credentials) {
  if ('token' in credentials) return { authorization: `Bearer ${credentials.token}` };
  const login = await fetch(new URL('/admin/v1/session', baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(credentials),
  });
  if (!login.ok) throw new Error(`POST /admin/v1/session answered ${login.status}: ${await login.text()}`);
  const cookie = login.headers.getSetCookie().find((c) => c.startsWith('svc_admin='))?.split(';')[0];
  if (!cookie) throw new Error('POST /admin/v1/session set no svc_admin cookie');
  const { csrfToken } = /** @type {{ csrfToken: string }} */ (await login.json());
  return { cookie, 'x-svc-csrf': csrfToken };
}

/**
 * @param {string} baseUrl
 * @param {keyof typeof DOCUMENTS} [kind]
 * @param {Record<string, string>} [headers] for the admin document: see adminHeaders()
 */
export async function fetchDocument(baseUrl, kind = 'public', headers = {}) {
  const { path } = DOCUMENTS[kind];
  const response = await fetch(new URL(path, baseUrl), { headers });
  if (!response.ok) throw new Error(`GET ${path} answered ${response.status}`);
  return /** @type {Record<string, unknown>} */ (await response.json());
}

/**
 * Both documents of one svc. A started svc has only its generator's admin and no collection, so the admin document's
 * `webhooks` section (payloads per collection) is the same on every run.
 * @param {string} baseUrl
 * @param {{ token: string } | { email: string, password: string }} credentials
 */
async function fetchDocuments(baseUrl, credentials) {
  return {
    public: await fetchDocument(baseUrl, 'public'),
    admin: await fetchDocument(baseUrl, 'admin', await adminHeaders(baseUrl, credentials)),
  };
}

/** @param {string[]} argv */
function parseArgs(argv) {
  /** @type {{ url?: string, server: { from: 'source' | 'dist', root: string }, check: boolean }} */
  const args = { server: { from: 'source', root: serverRoot }, check: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--check') args.check = true;
    else if (arg === '--url') args.url = argv[++i];
    else if (arg === '--server-root') args.server.root = resolve(argv[++i] ?? '');
    else if (arg === '--server') {
      const value = argv[++i];
      if (value !== 'source' && value !== 'dist') throw new Error('--server takes "source" or "dist"');
      args.server.from = value;
    } else throw new Error(`unknown argument ${arg}`);
  }
  return args;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  let documents;
  if (args.url) {
    const token = process.env.SVC_ADMIN_TOKEN;
    if (!token) throw new Error('--url needs SVC_ADMIN_TOKEN (an admin token with admin:read) to read /admin/v1/openapi.json');
    documents = await fetchDocuments(args.url, { token });
  } else {
    documents = await withServer(args.server, (baseUrl) => fetchDocuments(baseUrl, GENERATOR_ADMIN));
  }
  for (const kind of /** @type {(keyof typeof DOCUMENTS)[]} */ (Object.keys(DOCUMENTS))) {
    const { output } = DOCUMENTS[kind];
    const source = await typesFromDocument(documents[kind], kind);
    if (args.check) {
      const committed = existsSync(output) ? await readFile(output, 'utf8') : '';
      if (normalizeSource(committed) !== normalizeSource(source)) {
        console.error(`${output} is out of date: run \`npm run generate -w packages/sdk\``);
        process.exitCode = 1;
      }
      continue;
    }
    await mkdir(dirname(output), { recursive: true });
    await writeFile(output, source);
    console.log(`wrote ${output}`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
