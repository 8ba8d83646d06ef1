/**
 * The admin UI type-checks in `npm test` (the root `typecheck` script covers it too): its sources against svc-sdk's
 * types generated from the admin OpenAPI document (src/types.ts), so a member the server renames or drops fails here
 * instead of in a browser. The second test shows that the check reaches those generated types: a misuse of one is
 * reported.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const UI = fileURLToPath(new URL('../', import.meta.url));

/** The UI's compiler options and files, as `tsc -p packages/admin-ui` reads them. */
function uiConfig(): ts.ParsedCommandLine {
  const parsed = ts.getParsedCommandLineOfConfigFile(join(UI, 'tsconfig.json'), {}, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  });
  if (!parsed) throw new Error('packages/admin-ui/tsconfig.json could not be read');
  expect(parsed.errors).toEqual([]);
  return parsed;
}

/** Every diagnostic of a program over `files`, one line each: `file(line,col): message`. */
function diagnostics(files: string[], options: ts.CompilerOptions): string[] {
  const program = ts.createProgram(files, { ...options, noEmit: true });
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
    if (!d.file || d.start === undefined) return text;
    const { line, character } = d.file.getLineAndCharacterOfPosition(d.start);
    return `${d.file.fileName.replace(UI, 'packages/admin-ui/')}(${line + 1},${character + 1}): ${text}`;
  });
}

describe('the admin UI type-checks', () => {
  it('tsc -p packages/admin-ui finds nothing', () => {
    const config = uiConfig();
    expect(config.fileNames.length).toBeGreaterThan(40);
    expect(diagnostics(config.fileNames, config.options)).toEqual([]);
  }, 240_000);

  it('reads the API types from the generated admin document: a member the document lacks is an error', () => {
    const config = uiConfig();
    const dir = mkdtempSync(join(tmpdir(), 'svc-admin-ui-typecheck-'));
    try {
      const probe = join(dir, 'probe.ts');
      const types = join(UI, 'src/types.js');
      writeFileSync(probe, [
        `import type { Broker, TargetStats, Webhook } from ${JSON.stringify(types)};`,
        `export const kind = (b: Broker): 'nats' | 'rabbitmq' | 'redis' => b.kind;`,
        `export const rate = (s: TargetStats): number | null => s.successRate;`,
        `export const nope = (w: Webhook): unknown => w.notInTheDocument;`,
      ].join('\n'));
      const found = diagnostics([probe], config.options);
      expect(found).toHaveLength(1);
      expect(found[0]).toMatch(/probe\.ts\(4,\d+\): Property 'notInTheDocument' does not exist on type/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
