import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdkRoot = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/**
 * The client example imports `svc-sdk`, which resolves to dist/client through the workspace symlink. `npm test`
 * builds first; a lone `vitest run` may not have, so build when dist/client is missing or older than its sources.
 */
export function ensureClientBuilt(): void {
  const srcDir = join(sdkRoot, 'src/client');
  const stale = readdirSync(srcDir)
    .filter((f) => f.endsWith('.ts'))
    .some((f) => {
      const built = join(sdkRoot, 'dist/client', f.replace(/\.ts$/, '.js'));
      return !existsSync(built) || statSync(built).mtimeMs < statSync(join(srcDir, f)).mtimeMs;
    });
  if (!stale) return;
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', sdkRoot], { stdio: 'pipe' });
}
