import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const sdkRoot = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/**
 * The examples import `svc-sdk` and `svc-sdk/verify`, which resolve to dist/ through the workspace symlink.
 * `npm test` builds first; a lone `vitest run` may not have, so build when a part of dist/ is missing or older
 * than its sources.
 */
function ensureBuilt(part: 'verify' | 'client'): void {
  const srcDir = join(sdkRoot, 'src', part);
  const stale = readdirSync(srcDir)
    .filter((f) => f.endsWith('.ts'))
    .some((f) => {
      const built = join(sdkRoot, 'dist', part, f.replace(/\.ts$/, '.js'));
      return !existsSync(built) || statSync(built).mtimeMs < statSync(join(srcDir, f)).mtimeMs;
    });
  if (!stale) return;
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '-p', sdkRoot], { stdio: 'pipe' });
}

export const ensureVerifyBuilt = (): void => ensureBuilt('verify');
export const ensureClientBuilt = (): void => ensureBuilt('client');
