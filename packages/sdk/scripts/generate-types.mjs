#!/usr/bin/env node
// Regenerates src/client/openapi.ts from the OpenAPI document svc itself publishes at /api/v1/openapi.json.
// Dev-time only: `npm run generate -w packages/sdk`. It is deliberately not part of `build`, because the root build
// compiles the sdk before the server and the sdk must never need the server to build.
//
//   node scripts/generate-types.mjs                  start svc from its TypeScript sources (tsx), fetch, write
//   node scripts/generate-types.mjs --server dist    start the built server (packages/server/dist) instead
//   node scripts/generate-types.mjs --url URL        read the document of an svc that is already running
//   node scripts/generate-types.mjs --check          write nothing; exit 1 when the committed file differs
//
// The drift test (test/client-drift.test.ts) imports typesFromDocument() from here, so the committed file and the
// test agree on every option by construction.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';

const sdkRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const serverRoot = resolve(sdkRoot, '../server');

/** Where the generated types live: a .ts (not .d.ts) so tsc emits its declarations into dist/ with the client. */
export const OUTPUT = join(sdkRoot, 'src/client/openapi.ts');

const HEADER = `/**
 * Generated from svc's own /api/v1/openapi.json by packages/sdk/scripts/generate-types.mjs. Do not edit:
 * run \`npm run generate -w packages/sdk\`. test/client-drift.test.ts fails when this file and the document differ.
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
 * @returns {Promise<string>}
 */
export async function typesFromDocument(document) {
  // `silent`: the Redocly lint warnings belong to the server's tests (test/integration/openapi.test.ts), not here.
  const ast = await openapiTS(/** @type {any} */ (normalizeDocument(document)), { silent: true });
  return HEADER + astToString(ast);
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

/** @param {'source' | 'dist'} from */
function serverCommand(from) {
  if (from === 'dist') {
    const main = join(serverRoot, 'dist/svc.mjs');
    if (!existsSync(main)) throw new Error(`${main} does not exist: run \`npm run build\` first, or omit --server dist`);
    return [main, 'serve'];
  }
  // tsx runs the server's sources as they are now, so a route edited a minute ago is in the document.
  return ['--import', import.meta.resolve('tsx'), join(serverRoot, 'src/cli/main.ts'), 'serve'];
}

/**
 * Starts svc on a throwaway SQLite database, hands its base URL to `use`, and stops it again whatever happens.
 * @template T
 * @param {'source' | 'dist'} from
 * @param {(baseUrl: string) => Promise<T>} use
 * @returns {Promise<T>}
 */
async function withServer(from, use) {
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
  const child = spawn(process.execPath, serverCommand(from), { cwd: dir, env, stdio: ['ignore', 'ignore', 'pipe'] });
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

/** @param {string} baseUrl */
export async function fetchDocument(baseUrl) {
  const response = await fetch(new URL('/api/v1/openapi.json', baseUrl));
  if (!response.ok) throw new Error(`GET /api/v1/openapi.json answered ${response.status}`);
  return /** @type {Record<string, unknown>} */ (await response.json());
}

/** @param {string[]} argv */
function parseArgs(argv) {
  /** @type {{ url?: string, server: 'source' | 'dist', check: boolean }} */
  const args = { server: 'source', check: false };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--check') args.check = true;
    else if (arg === '--url') args.url = argv[++i];
    else if (arg === '--server') {
      const value = argv[++i];
      if (value !== 'source' && value !== 'dist') throw new Error('--server takes "source" or "dist"');
      args.server = value;
    } else throw new Error(`unknown argument ${arg}`);
  }
  return args;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const document = args.url ? await fetchDocument(args.url) : await withServer(args.server, fetchDocument);
  const source = await typesFromDocument(document);
  if (args.check) {
    const committed = existsSync(OUTPUT) ? await readFile(OUTPUT, 'utf8') : '';
    if (normalizeSource(committed) !== normalizeSource(source)) {
      console.error(`${OUTPUT} is out of date: run \`npm run generate -w packages/sdk\``);
      process.exitCode = 1;
    }
    return;
  }
  await mkdir(dirname(OUTPUT), { recursive: true });
  await writeFile(OUTPUT, source);
  console.log(`wrote ${OUTPUT}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((error) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
