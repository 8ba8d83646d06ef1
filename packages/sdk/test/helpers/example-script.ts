import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Runs an example script as a user would: a separate node process importing the built package, to its end. */
export async function runExample(script: string, env: Record<string, string>, timeoutMs: number): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [script], { env: { ...process.env, ...env }, timeout: timeoutMs });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout: string; stderr: string };
    return { code: e.code ?? -1, stdout: e.stdout, stderr: e.stderr };
  }
}

/** The example's output: one JSON object a line. */
export const jsonLines = (out: string): Array<Record<string, unknown>> =>
  out
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
