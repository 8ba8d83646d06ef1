// Bundles the command into one file (dist/svc.mjs). Loading ~400 modules of dependencies one by one was most of
// svc's cold start; one file halves it. Native and optional packages stay external and load from node_modules.
import { build } from 'esbuild';

await build({
  entryPoints: ['src/cli/main.ts'],
  outfile: 'dist/svc.mjs',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20',
  sourcemap: true,
  external: ['better-sqlite3', 'pg-native', '@node-rs/argon2', 'svc-admin-ui'],
  // CommonJS dependencies call require(); an ES module has none of its own.
  banner: { js: "import { createRequire as __svcRequire } from 'node:module'; const require = __svcRequire(import.meta.url);" },
  logLevel: 'warning',
});
