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

await build({ ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/svc.mjs' });
// SQLite's reader threads (db/dialects/sqlite-readers.ts) load their script from beside the bundle.
await build({ ...common, entryPoints: ['src/db/dialects/sqlite-reader-thread.ts'], outfile: 'dist/sqlite-reader-thread.js' });
