// Bundles the admin UI into static files the server serves at /admin/:
// src/main.ts → dist/app.js, plus src/index.html and src/styles.css copied as they are.
// dist/ is overwritten file by file rather than deleted first, so a server (or a test) reading it
// while a build runs never finds the folder missing.
import { build } from 'esbuild';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const here = fileURLToPath(new URL('.', import.meta.url));
const src = `${here}src/`;
const dist = `${here}dist/`;

export async function buildAdminUi() {
  await mkdir(dist, { recursive: true });
  await build({
    entryPoints: [`${src}main.ts`],
    outfile: `${dist}app.js`,
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
    minify: true,
    sourcemap: 'linked',
    legalComments: 'none',
    logLevel: 'warning',
  });
  await copyFile(`${src}styles.css`, `${dist}styles.css`);
  // A content version on each asset URL, so a browser holding a cached app.js never pairs it with a
  // newer index.html after an upgrade.
  let html = await readFile(`${src}index.html`, 'utf8');
  for (const asset of ['app.js', 'styles.css']) {
    const version = createHash('sha256').update(await readFile(`${dist}${asset}`)).digest('hex').slice(0, 12);
    html = html.replace(`/admin/${asset}"`, `/admin/${asset}?v=${version}"`);
  }
  await writeFile(`${dist}index.html`, html);
  return dist;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await buildAdminUi();
}
