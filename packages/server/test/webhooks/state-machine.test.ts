import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../../../', import.meta.url).pathname;
const QUEUE = join(ROOT, 'packages/server/src/webhooks/queue');
const SRC = join(ROOT, 'packages/server/src');
/** Files of queue/ that are not transitions: the job's types, and reads. */
const NOT_TRANSITIONS = new Set(['job.ts', 'attempts-store.ts', 'jobs-store.ts']);
/**
 * The databases' drivers of the queue (db/dialects/<db>/jobs.ts): a transition whose statement differs by database
 * has it written there, called as `caps.jobs.<verb>(…)` from its file in queue/.
 */
const DRIVERS = /^\/db\/dialects\/[a-z]+\/jobs\.ts$/;

const camel = (kebab: string): string => kebab.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase());

function diagramTransitions(): Set<string> {
  const doc = readFileSync(join(ROOT, 'docs/delivery-states.md'), 'utf8');
  const diagram = /```mermaid\n([\s\S]*?)```/.exec(doc)![1]!;
  return new Set([...diagram.matchAll(/-->\s*[\w[\]*]+\s*:\s*(\w+)\s+—/g)].map((m) => m[1]!));
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

const TABLE = 'delivery_jobs';
/** Query-builder methods whose table argument is only read. */
const READ_METHODS = new Set(['selectFrom', 'selectAll', 'innerJoin', 'leftJoin', 'rightJoin', 'fullJoin', 'crossJoin', 'innerJoinLateral', 'leftJoinLateral']);
/** Constants that list the table's name as data (metric labels, CLI output), never as a statement's table. */
const NAMES_AS_DATA = new Set(['PRUNED_TABLES']);
/** The table's name in a string, as a table: not a longer name (`delivery_jobs_new`), not a column (`delivery_jobs.id`). */
const NAMED = new RegExp(`(?<![\\w.])"?${TABLE}"?(?![\\w.])`, 'g');

/**
 * Where `source` may write delivery_jobs: every place that names the table other than as a read, whatever writes
 * it (Kysely's updateTable/insertInto/deleteFrom, insertRows' `table:`, SQL text, a name kept in a variable for
 * later). It allows only what is known to read: a query builder's from/join/selectAll argument, and SQL text where the
 * name follows FROM or JOIN (not DELETE FROM). Anything else is reported, so a new way of writing cannot slip by.
 */
function jobWrites(source: string, file = 'source.ts'): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const report = (node: ts.Node, why: string) => {
    const { line } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
    found.push(`${file}:${line + 1}: ${why}: ${source.split('\n')[line]!.trim().slice(0, 140)}`);
  };
  const callee = (call: ts.CallExpression): string | null =>
    ts.isPropertyAccessExpression(call.expression) ? call.expression.name.text : ts.isIdentifier(call.expression) ? call.expression.text : null;
  const namedAsData = (node: ts.Node): boolean => {
    for (let n: ts.Node | undefined = node; n; n = n.parent) if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && NAMES_AS_DATA.has(n.name.text)) return true;
    return false;
  };
  /** SQL text: each mention of the table must follow FROM or JOIN, and not be DELETE FROM's. */
  const checkSql = (node: ts.Node, text: string) => {
    for (const m of text.matchAll(NAMED)) {
      const before = text.slice(0, m.index).replace(/\s+/g, ' ').trimEnd().toLowerCase();
      if (/\b(insert into|update|delete from|merge into|truncate( table)?|alter table|drop table)$/.test(before)) report(node, 'SQL that writes the table');
      else if (!/\b(from|join)$/.test(before)) report(node, 'SQL naming the table where it is not read');
    }
  };
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      const text = node.text;
      if (new RegExp(`^${TABLE}( as \\w+)?$`).test(text)) {
        const parent = node.parent;
        const read = ts.isCallExpression(parent) && parent.arguments[0] === node && READ_METHODS.has(callee(parent) ?? '');
        if (!read && !namedAsData(node)) {
          const call = ts.isCallExpression(parent) ? callee(parent) : null;
          report(node, call ? `the table given to ${call}()` : 'the table named outside a read (kept in a value, passed in an object)');
        }
      } else checkSql(node, text);
    } else if (ts.isTemplateExpression(node)) {
      // Interpolations stand in as a placeholder: the text around them is the SQL.
      checkSql(node, [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(' ? '));
      for (const span of node.templateSpans) visit(span.expression);
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
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

  it('nothing outside the transition files writes delivery_jobs (migrations aside), by any means', () => {
    const writers = walk(SRC)
      .filter((path) => !path.includes('/db/migrations/'))
      .filter((path) => !(path.startsWith(QUEUE) && !NOT_TRANSITIONS.has(path.slice(QUEUE.length + 1))))
      .filter((path) => !DRIVERS.test(path.slice(SRC.length)))
      .flatMap((path) => jobWrites(readFileSync(path, 'utf8'), path.slice(SRC.length)));
    expect(writers).toEqual([]);
  });

  it('the check sees every way of writing the table, and lets reads pass', () => {
    const writes = [
      `await db.updateTable('delivery_jobs').set({ state: 'dead' }).execute();`,
      `await trx.insertInto('delivery_jobs').values(row).execute();`,
      `await db.deleteFrom('delivery_jobs as j').where('j.id', '=', id).execute();`,
      `await db.mergeInto('delivery_jobs').using('x', 'x.id', 'delivery_jobs.id').execute();`,
      `await insertRows(trx, { name: 'jobs-insert', table: 'delivery_jobs', columns: JOB_COLUMNS }, rows);`,
      `const spec = { name: 'jobs', table: 'delivery_jobs' as const, columns }; await insertRows(trx, spec, rows);`,
      `const target = 'delivery_jobs'; await db.updateTable(target).set({ state }).execute();`,
      'await sql`update delivery_jobs set state = ${state} where id = ${id}`.execute(db);',
      'await sql`DELETE FROM "delivery_jobs" WHERE state = \'dead\'`.execute(db);',
      'await sql`insert into delivery_jobs (id) values (${id})`.execute(db);',
      `await db.executeQuery(CompiledQuery.raw('update delivery_jobs set state = $1', ['dead']));`,
      'await sql`with gone as (delete from delivery_jobs where id = ${id} returning id) select * from gone`.execute(db);',
      `await sql\`update \${sql.table('delivery_jobs')} set state = 'dead'\`.execute(db);`,
    ];
    for (const source of writes) expect(jobWrites(source), source).not.toEqual([]);
    const reads = [
      `await db.selectFrom('delivery_jobs').selectAll().execute();`,
      `await db.selectFrom('delivery_jobs as j').innerJoin('webhooks as w', 'w.id', 'j.webhook_id').selectAll('delivery_jobs').execute();`,
      `q.where('delivery_jobs.state', '=', 'pending').orderBy('delivery_jobs.id');`,
      'await sql`select count(*) from delivery_jobs where state = ${state}`.execute(db);',
      'await sql`update webhooks set x = 1 where exists (select 1 from delivery_jobs j where j.webhook_id = webhooks.id)`.execute(db);',
      `export const PRUNED_TABLES = ['delivery_jobs', 'delivery_attempts', 'events'] as const;`,
      `await db.updateTable('delivery_jobs_new').set({ state }).execute(); // another table`,
    ];
    for (const source of reads) expect(jobWrites(source), source).toEqual([]);
  });

  it('the check finds the write of every transition, made in its file, by its database\'s driver, or through another transition it imports', () => {
    const source = (f: string) => readFileSync(join(QUEUE, f), 'utf8');
    const writes = new Set(files.filter((f) => jobWrites(source(f), f).length > 0 || /\bcaps\.jobs\.\w+\(/.test(source(f))));
    const delegates = (f: string) => [...source(f).matchAll(/from '\.\/([\w-]+)\.js'/g)].some((m) => writes.has(`${m[1]}.ts`));
    // enqueue.ts, for one, writes its jobs through insertRows alone (the way the check once missed).
    expect(files.filter((f) => !writes.has(f) && !delegates(f))).toEqual([]);
    // Every driver writes the table, and is found writing it (the allowance above is for files that do).
    const drivers = walk(SRC).filter((path) => DRIVERS.test(path.slice(SRC.length)));
    expect(drivers.map((path) => path.slice(SRC.length)).sort()).toEqual(['/db/dialects/postgres/jobs.ts', '/db/dialects/sqlite/jobs.ts']);
    for (const path of drivers) expect(jobWrites(readFileSync(path, 'utf8'), path)).not.toEqual([]);
  });
});
