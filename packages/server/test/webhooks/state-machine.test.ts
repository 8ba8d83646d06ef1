import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../../../', import.meta.url).pathname;
const QUEUE = join(ROOT, 'packages/server/src/webhooks/queue');
const SRC = join(ROOT, 'packages/server/src');
/** Files of queue/ that are not transitions: the job's types, and reads. */
const NOT_TRANSITIONS = new Set(['job.ts', 'attempts-store.ts', 'jobs-store.ts']);

const camel = (kebab: string): string => kebab.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

function diagramTransitions(): Set<string> {
  const doc = readFileSync(join(ROOT, 'docs/delivery-states.md'), 'utf8');
  const diagram = /```mermaid\n([\s\S]*?)```/.exec(doc)![1]!;
  return new Set([...diagram.matchAll(/-->\s*[\w[\]*]+\s*:\s*(\w+)\s+—/g)].map((m) => m[1]!));
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

describe('the delivery state machine: docs/delivery-states.md and src/webhooks/queue/ name the same transitions', () => {
  const files = readdirSync(QUEUE).filter((f) => f.endsWith('.ts') && !NOT_TRANSITIONS.has(f));

  it('every arrow of the diagram is a file of queue/, and every transition file an arrow', () => {
    expect([...diagramTransitions()].sort()).toEqual(files.map((f) => camel(f.replace(/\.ts$/, ''))).sort());
  });

  it.each(files)('%s exports the function its name says, and it has a test of its own', (file) => {
    const name = camel(file.replace(/\.ts$/, ''));
    expect(readFileSync(join(QUEUE, file), 'utf8')).toMatch(new RegExp(`export async function ${name}\\(`));
    expect(readdirSync(join(ROOT, 'packages/server/test/webhooks/queue'))).toContain(file.replace(/\.ts$/, '.test.ts'));
  });

  it('nothing outside the transition files writes delivery_jobs (migrations aside)', () => {
    const writers = walk(SRC)
      .filter((path) => !path.includes('/db/migrations/'))
      .filter((path) => !(path.startsWith(QUEUE) && !NOT_TRANSITIONS.has(path.slice(QUEUE.length + 1))))
      .filter((path) => /updateTable\('delivery_jobs'\)|insertInto\('delivery_jobs'\)|deleteFrom\('delivery_jobs'\)|(update|insert into|delete from) delivery_jobs\b/i.test(readFileSync(path, 'utf8')));
    expect(writers.map((p) => p.slice(SRC.length))).toEqual([]);
  });
});
