// Bundles the command into one file (dist/svc.mjs). Loading ~400 modules of dependencies one by one was most of
// svc's cold start; one file halves it. Native and optional packages stay external and load from node_modules.
import { build } from 'esbuild';

const common = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  external: ['better-sqlite3', 'pg-native', '@node-rs/argon2', 'svc-admin-ui'],
  // CommonJS dependencies call require(); an ES module has none of its own.
  banner: { js: "import { createRequire as __svcRequire } from 'node:module'; const require = __svcRequire(import.meta.url);" },
  logLevel: 'warning',
};

// `--without-tracing` (the benchmarks' W2T/W4T only): the same bundle in dist-notrace/ with tracing/tracing.ts replaced
// by a module that is always off, so what tracing costs while it is off can be measured against a build without it.
const withoutTracing = process.argv.includes('--without-tracing');
const out = withoutTracing ? 'dist-notrace' : 'dist';
const NO_TRACING = `export const tracing = () => null;
export async function startTracing() { return { enabled: false, shutdown: async () => {} }; }`;
const plugins = withoutTracing
  ? [{ name: 'without-tracing', setup: (b) => b.onLoad({ filter: /[\\/]src[\\/]tracing[\\/]tracing\.ts$/ }, () => ({ contents: NO_TRACING, loader: 'ts' })) }]
  : [];

const bundles = [
  { entryPoints: ['src/cli/main.ts'], outfile: 'dist/svc.mjs' },
  // SQLite's reader threads (db/dialects/sqlite-readers.ts) load their script from beside the bundle.
  { entryPoints: ['src/db/dialects/sqlite-reader-thread.ts'], outfile: 'dist/sqlite-reader-thread.js' },
];
for (const b of bundles) await build({ ...common, plugins, ...b, outfile: b.outfile.replace(/^dist\//, `${out}/`) });
