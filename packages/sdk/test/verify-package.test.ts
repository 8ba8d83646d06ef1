import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { build } from 'esbuild';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { verifyDelivery } from '../src/verify/index.js';
import { SECRET, signedDelivery } from './helpers/deliveries.js';

const sdkRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const verifyDir = join(sdkRoot, 'src/verify');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile() && /\.(ts|mts|js|mjs)$/.test(e.name))
    .map((e) => join(e.parentPath, e.name));
}

/** Module specifiers of static imports, re-exports and dynamic imports. */
function specifiers(source: string): string[] {
  const found: string[] = [];
  const patterns = [/\b(?:import|export)\s[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g, /\bimport\s*\(\s*['"]([^'"]+)['"]/g];
  for (const re of patterns) for (const m of source.matchAll(re)) found.push(m[1]!);
  for (const m of source.matchAll(/^\s*import\s*['"]([^'"]+)['"]/gm)) found.push(m[1]!);
  return found;
}

describe('svc-sdk/verify has no dependencies', () => {
  it('imports only its own files: no packages, no node: builtins', () => {
    const files = sourceFiles(verifyDir);
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      const source = readFileSync(file, 'utf8');
      for (const spec of specifiers(source)) {
        expect(spec, `${relative(sdkRoot, file)} imports ${spec}`).toMatch(/^\.\/[a-z-]+\.js$/);
      }
      expect(source, file).not.toMatch(/\brequire\s*\(|node:crypto|['"]crypto['"]/);
    }
  });

  it('uses none of the packages svc-sdk depends on', () => {
    const pkg = JSON.parse(readFileSync(join(sdkRoot, 'package.json'), 'utf8')) as Record<string, unknown>;
    const deps = Object.keys({
      ...(pkg.dependencies as object),
      ...(pkg.peerDependencies as object),
      ...(pkg.optionalDependencies as object),
    });
    const imported = sourceFiles(verifyDir).flatMap((f) => specifiers(readFileSync(f, 'utf8')));
    for (const dep of deps) expect(imported.some((s) => s === dep || s.startsWith(`${dep}/`))).toBe(false);
  });

  it('nothing under packages/sdk/src imports the server', () => {
    for (const file of sourceFiles(join(sdkRoot, 'src'))) {
      const source = readFileSync(file, 'utf8');
      for (const spec of specifiers(source)) {
        expect(spec, `${relative(sdkRoot, file)} imports ${spec}`).not.toMatch(/svc-server|packages\/server|\.\.\/server/);
        if (spec.startsWith('.')) {
          expect(resolve(dirname(file), spec).startsWith(join(sdkRoot, 'src')), `${file}: ${spec}`).toBe(true);
        }
      }
    }
  });

  it('bundles for a platform without Node built-ins and verifies with only Web Crypto and TextEncoder', async () => {
    const result = await build({
      entryPoints: [join(verifyDir, 'index.ts')],
      bundle: true,
      platform: 'neutral',
      format: 'iife',
      globalName: 'svcVerify',
      write: false,
      logLevel: 'silent',
    });
    const code = result.outputFiles[0]!.text;
    // A bare realm, as in an edge worker: no process, no Buffer, no require.
    const context = vm.createContext({ crypto: globalThis.crypto, TextEncoder, TextDecoder });
    vm.runInContext(code, context);
    const d = signedDelivery();
    context.input = { secret: SECRET, headers: d.headers, rawBody: d.body };
    const envelope = await vm.runInContext('svcVerify.verifyDelivery(input)', context);
    expect(envelope.id).toBe(d.id);
    context.bad = { secret: 'whsec_other', headers: d.headers, rawBody: d.body };
    const code2 = await vm.runInContext('svcVerify.verifyDelivery(bad).then(() => "ok", (e) => e.code)', context);
    expect(code2).toBe('signature_mismatch');
    // handleDelivery too: its claim tokens come from Web Crypto as well.
    context.handled = { secret: SECRET, headers: d.headers, rawBody: d.body, store: null };
    const outcomes = await vm.runInContext(
      `(async () => {
        const options = { ...handled, store: new svcVerify.MemoryDedupeStore() };
        const first = await svcVerify.handleDelivery(options, (e) => e.id);
        const again = await svcVerify.handleDelivery(options, () => 'ran twice');
        return [first.result, again.duplicate];
      })()`,
      context,
    );
    expect(outcomes).toEqual([d.id, true]);
    expect(vm.runInContext('typeof Buffer + typeof process + typeof require', context)).toBe(
      'undefinedundefinedundefined',
    );
  });
});

describe('Web Crypto is the only path', () => {
  afterEach(() => vi.restoreAllMocks());

  it('computes the HMAC with crypto.subtle', async () => {
    const importKey = vi.spyOn(globalThis.crypto.subtle, 'importKey');
    const sign = vi.spyOn(globalThis.crypto.subtle, 'sign');
    const d = signedDelivery();
    await verifyDelivery({ secrets: [SECRET, 'whsec_other'], headers: d.headers, rawBody: d.body });
    expect(importKey).toHaveBeenCalledTimes(2);
    expect(sign).toHaveBeenCalledTimes(2);
    expect(sign.mock.calls[0]![0]).toBe('HMAC');
  });

  it('fails loudly when the runtime has no Web Crypto', async () => {
    vi.spyOn(globalThis, 'crypto', 'get').mockReturnValue(undefined as unknown as Crypto);
    const d = signedDelivery();
    await expect(verifyDelivery({ secret: SECRET, headers: d.headers, rawBody: d.body })).rejects.toThrow(/Web Crypto/);
  });
});
