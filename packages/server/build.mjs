// Bundles the command (dist/svc.mjs and the chunks it loads, below). Loading ~400 modules of dependencies one by one
// was most of svc's cold start; a bundle halves it. Native and optional packages stay external and load from
// node_modules.
import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
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
const withoutTracingPlugin = { name: 'without-tracing', setup: (b) => b.onLoad({ filter: /[\\/]src[\\/]tracing[\\/]tracing\.ts$/ }, () => ({ contents: NO_TRACING, loader: 'ts' })) };

/** Whether Node loads `file` as CommonJS: `.cjs`, or `.js` in a package whose package.json does not say "module". */
function isCommonJs(file) {
  if (file.endsWith('.cjs')) return true;
  if (!file.endsWith('.js')) return false;
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    try {
      return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).type !== 'module';
    } catch {
      // no package.json here: look further up
    }
  }
  return true;
}

// A dynamic import() of a CommonJS module gets its named exports from Node (`(await import('cookie')).parseCookie`,
// as @fastify/cookie and OpenTelemetry's exporters are read). Split into a chunk of its own, esbuild exports only
// `default` from it; this puts a module in front that names each export, as Node's loader would have found them.
const cjsNamedExports = {
  name: 'cjs-named-exports',
  setup(b) {
    b.onResolve({ filter: /.*/ }, async (args) => {
      if (args.kind !== 'dynamic-import' || args.namespace !== 'file') return undefined;
      const real = await b.resolve(args.path, { kind: 'import-statement', resolveDir: args.resolveDir, importer: args.importer });
      if (real.errors.length > 0 || real.external || !real.path.includes('node_modules') || !isCommonJs(real.path)) return undefined;
      return { path: real.path, namespace: 'cjs-named-exports' };
    });
    b.onLoad({ filter: /.*/, namespace: 'cjs-named-exports' }, (args) => {
      const names = Object.keys(createRequire(args.path)(args.path)).filter((n) => /^[A-Za-z_$][\w$]*$/.test(n) && n !== 'default' && n !== '__esModule');
      const from = JSON.stringify(args.path);
      return { contents: `import * as ns from ${from};\nexport const { ${names.join(', ')} } = ns;\nexport default ns.default;\n`, resolveDir: dirname(args.path), loader: 'js' };
    });
  },
};
const plugins = [cjsNamedExports, ...(withoutTracing ? [withoutTracingPlugin] : [])];

// The command is split: what a dynamic import() names (the HTTP API, each broker's client, the OpenTelemetry SDK, the
// one-shot commands) is a chunk of its own in chunks/, read only by a process that runs it. Parsing the one 7.3 MB
// file was a quarter of a worker's start (bench/README, "Start-up").
rmSync(`${out}/chunks`, { recursive: true, force: true }); // chunk names carry a hash: no stale one is left beside the new
await build({
  ...common,
  plugins,
  entryPoints: { svc: 'src/cli/main.ts' },
  outdir: out,
  outExtension: { '.js': '.mjs' },
  splitting: true,
  chunkNames: 'chunks/[name]-[hash]',
});
// SQLite's reader threads (db/dialects/sqlite-readers.ts) load their script from beside the bundle.
await build({ ...common, plugins, entryPoints: ['src/db/dialects/sqlite-reader-thread.ts'], outfile: `${out}/sqlite-reader-thread.js` });
