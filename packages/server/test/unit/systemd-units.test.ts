import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/load.js';
import { SETTINGS } from '../../src/config/schema.js';
import { connect } from '../../src/db/connect.js';
import { ALL_MIGRATIONS, migrateToLatest } from '../../src/db/migrate.js';
import { createRegistry } from '../../src/http/metrics.js';
import { createTestDatabase, DIALECTS } from '../helpers/db.js';

/**
 * docs/production.md and examples/systemd/ stay true: the units parse, run a real svc command the way svc's own first
 * line runs Node, stop within systemd's timeout and pass `systemd-analyze verify` where it exists; the environment
 * example loads; every setting, command, metric, migration and link the guide names exists; its SQL runs on a
 * migrated PostgreSQL database; docs/README.md lists every doc.
 */
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const UNITS = join(ROOT, 'examples/systemd');
const GUIDE = join(ROOT, 'docs/production.md');
const INDEX = join(ROOT, 'docs/README.md');
const SERVER = join(ROOT, 'packages/server');
const read = (path: string) => readFileSync(path, 'utf8');
const guide = read(GUIDE);
const SETTING_NAMES = new Set(SETTINGS.map((s) => s.env));
const UNIT_FILES = { 'svc-serve.service': 'serve', 'svc-worker@.service': 'worker', 'svc-migrate.service': 'migrate' } as const;
const HARDENING = { User: 'svc', Group: 'svc', NoNewPrivileges: 'yes', ProtectSystem: 'strict', PrivateTmp: 'yes', KillSignal: 'SIGTERM' };

type Unit = Map<string, Map<string, string[]>>;

/** systemd's unit syntax: [Section] headers and Key=Value lines; comments start with # or ;. Keys may repeat. */
function parseUnit(text: string): Unit {
  const unit: Unit = new Map();
  let section: Map<string, string[]> | null = null;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) return;
    const header = /^\[([A-Za-z]+)\]$/.exec(line);
    if (header) {
      if (unit.has(header[1]!)) throw new Error(`line ${i + 1}: [${header[1]}] twice`);
      unit.set(header[1]!, (section = new Map()));
      return;
    }
    const pair = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (!pair || !section) throw new Error(`line ${i + 1} is neither a section nor Key=Value: ${raw}`);
    section.set(pair[1]!, [...(section.get(pair[1]!) ?? []), pair[2]!]);
  });
  return unit;
}

const value = (unit: Unit, section: string, key: string) => unit.get(section)?.get(key)?.at(-1);

/** svc's commands and their options, read from the CLI's source: `serve` → {--no-worker}, `admin create` → {--email, --password}. */
function cliCommands(): Map<string, Set<string>> {
  const src = read(join(SERVER, 'src/cli/main.ts'));
  const parents = new Map([...src.matchAll(/const (\w+) = program\s*\.command\('([\w-]+)'\)/g)].map((m) => [m[1]!, m[2]!]));
  const starts = [...src.matchAll(/(\w+)\s*\.command\('([\w-]+)'\)/g)];
  return new Map(
    starts.map((m, i) => {
      const body = src.slice(m.index, starts[i + 1]?.index ?? src.length);
      const options = new Set([...body.matchAll(/(?:option|Option)\('(--[\w-]+)/g)].map((o) => o[1]!));
      return [m[1] === 'program' ? m[2]! : `${parents.get(m[1]!)} ${m[2]}`, options] as const;
    }),
  );
}
const COMMANDS = cliCommands();

/** The command a `svc …` invocation names, once checked: every word and option must exist. */
function checkInvocation(words: string[]): string {
  const [first = '', second = ''] = words;
  const command = COMMANDS.has(`${first} ${second}`) ? `${first} ${second}` : first;
  if (!COMMANDS.has(command)) throw new Error(`svc ${words.join(' ')}: no command "${first}" (src/cli/main.ts)`);
  for (const word of words.filter((w) => w.startsWith('--'))) {
    const option = word.split('=')[0]!;
    if (option !== '--help' && !COMMANDS.get(command)!.has(option)) throw new Error(`svc ${words.join(' ')}: "${command}" has no ${option}`);
  }
  return command;
}

/** Every `svc <command>` in a text: `…/svc.mjs <command>` anywhere, and in the guide `svc …` inline or at a line's start in sh blocks. */
function invocations(text: string): string[][] {
  const found: string[][] = [];
  // A command ends at a comment or at the shell's `;`, `)`, `&&`, `|`.
  const words = (rest: string) => rest.replace(/\s+#.*$/, '').split(/[;)&|]/)[0]!.trim().split(/\s+/).filter((w) => w !== '');
  for (const m of text.matchAll(/svc\.mjs ([^\n]*)/g)) found.push(words(m[1]!));
  for (const m of text.matchAll(/`svc ([^`]+)`/g)) found.push(words(m[1]!));
  for (const block of fenced(text, 'sh')) for (const m of block.matchAll(/^svc ([^\n]*)/gm)) found.push(words(m[1]!));
  return found.filter((w) => /^[a-z][a-z-]*$/.test(w[0] ?? ''));
}

function fenced(text: string, info: string): string[] {
  // Fences may be indented (inside a list item).
  return [...text.matchAll(new RegExp('^ *```' + info + '\\n([\\s\\S]*?)^ *```', 'gm'))].map((m) => m[1]!);
}

const settingsNamed = (text: string) => [...text.matchAll(/\bSVC_[A-Z0-9_]*[A-Z0-9]\b/g)].map((m) => m[0]);

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, heading] of markdown.replace(/^```[\s\S]*?^```/gm, '').matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading!.toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    out.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return out;
}

function checkLinks(file: string): void {
  const text = read(file).replace(/^```[\s\S]*?^```/gm, '');
  for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/.test(target!)) continue;
    const [path, anchor] = target!.split('#') as [string, string | undefined];
    const linked = path === '' ? file : resolve(dirname(file), path);
    expect(existsSync(linked), `${file}: ${target} does not exist`).toBe(true);
    if (anchor !== undefined) expect([...anchors(read(linked))], `${file}: ${target}`).toContain(anchor);
  }
}

describe('examples/systemd units', () => {
  const shebang = read(join(SERVER, 'src/cli/main.ts')).split('\n')[0]!;
  const nodeFlags = shebang.replace(/^#!\/usr\/bin\/env -S node\s*/, '').split(/\s+/).filter((f) => f !== '');
  // The forced exit in runForever: systemd must wait longer than svc does before it sends SIGKILL.
  const forcedExitMs = Number(/const force = setTimeout\([\s\S]*?\}, ([\d_]+)\);/.exec(read(join(SERVER, 'src/cli/main.ts')))![1]!.replace(/_/g, ''));

  it.each(Object.entries(UNIT_FILES))('%s runs `svc %s` as svc runs itself, hardened', (file, command) => {
    const unit = parseUnit(read(join(UNITS, file)));
    expect([...unit.keys()].every((s) => ['Unit', 'Service', 'Install'].includes(s))).toBe(true);
    const [node, ...args] = value(unit, 'Service', 'ExecStart')!.split(/\s+/);
    expect(node).toMatch(/^\/\S+\/node$/);
    expect(nodeFlags).toEqual(['--initial-old-space-size=96', '--max-semi-space-size=8']);
    expect(args.slice(0, nodeFlags.length)).toEqual(nodeFlags);
    expect(args[nodeFlags.length]).toMatch(/\/packages\/server\/dist\/svc\.mjs$/);
    // build.mjs writes the command as dist/svc.mjs: the entry named svc, with the .mjs extension.
    expect(read(join(SERVER, 'build.mjs'))).toContain("entryPoints: { svc: 'src/cli/main.ts' }");
    expect(read(join(SERVER, 'build.mjs'))).toContain("outExtension: { '.js': '.mjs' }");
    expect(checkInvocation(args.slice(nodeFlags.length + 1))).toBe(command);
    for (const [key, expected] of Object.entries(HARDENING)) expect(value(unit, 'Service', key), key).toBe(expected);
    expect(value(unit, 'Service', 'EnvironmentFile')).toBe('/etc/svc/svc.env');
    for (const env of unit.get('Service')!.get('Environment') ?? []) {
      for (const name of settingsNamed(env)) expect(SETTING_NAMES, name).toContain(name);
    }
    if (command === 'migrate') {
      expect(value(unit, 'Service', 'Type')).toBe('oneshot');
      // Without RemainAfterExit the unit returns to inactive, so each start of a process runs `svc migrate` again.
      expect(value(unit, 'Service', 'RemainAfterExit')).toBeUndefined();
      expect(unit.get('Service')!.get('Environment')).toContain('"PGOPTIONS=-c lock_timeout=10s"');
      return;
    }
    expect(value(unit, 'Service', 'Restart')).toBe('on-failure');
    expect(Number(/^(\d+)s$/.exec(value(unit, 'Service', 'TimeoutStopSec')!)![1]) * 1000).toBeGreaterThan(forcedExitMs);
    expect(value(unit, 'Unit', 'Requires')).toBe('svc-migrate.service');
    expect(value(unit, 'Unit', 'After')!.split(/\s+/)).toContain('svc-migrate.service');
    expect(value(unit, 'Install', 'WantedBy')).toBe('multi-user.target');
  });

  it('the SQLite data directory is writable where a unit may open SQLite', () => {
    for (const file of ['svc-serve.service', 'svc-migrate.service']) {
      const unit = parseUnit(read(join(UNITS, file)));
      expect(value(unit, 'Service', 'StateDirectory')).toBe('svc');
      expect(value(unit, 'Service', 'ReadWritePaths')).toBe('/var/lib/svc');
    }
    expect(read(join(UNITS, 'svc.env.example'))).toContain('sqlite:/var/lib/svc/svc.db');
  });

  it('every svc invocation and setting in the units exists', () => {
    for (const file of Object.keys(UNIT_FILES)) {
      const text = read(join(UNITS, file));
      for (const words of invocations(text)) expect(() => checkInvocation(words), file).not.toThrow();
      for (const name of settingsNamed(text)) expect(SETTING_NAMES, `${file}: ${name}`).toContain(name);
    }
  });

  const analyze = spawnSync('systemd-analyze', ['--version'], { encoding: 'utf8' });
  it.runIf(analyze.status === 0)('pass systemd-analyze verify with no warning (Node at this machine\'s path)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-units-'));
    try {
      // verify checks that ExecStart's program exists: the units name Debian's /usr/bin/node.
      for (const file of Object.keys(UNIT_FILES)) {
        writeFileSync(join(dir, file), read(join(UNITS, file)).replace(/^(#?\s*ExecStart=)\/usr\/bin\/node /gm, `$1${process.execPath} `));
      }
      for (const file of Object.keys(UNIT_FILES)) {
        const run = spawnSync('systemd-analyze', ['verify', join(dir, file)], { encoding: 'utf8', timeout: 20_000 });
        expect({ file, status: run.status, stderr: run.stderr }).toEqual({ file, status: 0, stderr: '' });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('examples/systemd/svc.env.example', () => {
  const text = read(join(UNITS, 'svc.env.example'));
  const env = Object.fromEntries(
    text.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#')).map((l) => {
      const m = /^([A-Z0-9_]+)=(\S*)$/.exec(l);
      if (!m) throw new Error(`not KEY=VALUE without spaces or quotes: ${l}`);
      return [m[1]!, m[2]!];
    }),
  );

  it('names only settings svc knows, in comments too', () => {
    for (const name of [...Object.keys(env), ...settingsNamed(text)]) expect(SETTING_NAMES, name).toContain(name);
  });

  it('refuses to start as shipped, for want of SVC_SECRET_KEY, and loads once it is set', () => {
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(/^SVC_SECRET_KEY: is required with PostgreSQL/);
    const config = loadConfig({ ...env, SVC_SECRET_KEY: randomBytes(32).toString('hex') });
    expect(config).toMatchObject({ host: '127.0.0.1', publicUrl: 'https://svc.example.com', trustProxy: ['loopback'], metricsToken: null });
    expect(config.databaseUrl).toMatch(/^postgres:\/\//);
  });

  it('writes out the defaults where it says so', () => {
    const defaults = SETTINGS.filter((s) => /^SVC_(WEBHOOK|RETENTION)_/.test(s.env) && s.env in env);
    expect(defaults.length).toBeGreaterThanOrEqual(7);
    for (const s of defaults) expect(env[s.env], s.env).toBe(s.defaultText);
  });
});

describe('docs/production.md', () => {
  it('names only settings that exist', () => {
    const named = settingsNamed(guide);
    expect(named.length).toBeGreaterThan(20);
    for (const name of named) expect(SETTING_NAMES, name).toContain(name);
  });

  it('names only svc commands and options that exist', () => {
    const found = invocations(guide);
    expect(found.length).toBeGreaterThan(15);
    for (const words of found) expect(() => checkInvocation(words)).not.toThrow();
  });

  it('names only metrics svc serves', async () => {
    const src = readdirSync(join(SERVER, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts')).map((f) => read(join(SERVER, 'src', f)));
    const served = new Set([...src.flatMap((s) => [...s.matchAll(/name: '(svc_[a-z0-9_]+)'/g)].map((m) => m[1]!)), ...(await (await createRegistry()).getMetricsAsJSON()).map((m) => m.name)]);
    const section = guide.slice(guide.indexOf('\n## Monitoring'), guide.indexOf('\n## ', guide.indexOf('\n## Monitoring') + 1));
    const named = [...section.matchAll(/\bsvc_[a-z0-9_]+/g)].map((m) => m[0].replace(/_(bucket|sum|count)$/, ''));
    expect(named.length).toBeGreaterThan(10);
    for (const name of named) expect(served, name).toContain(name);
  });

  it('says how each migration runs beside older processes', () => {
    for (const migration of ALL_MIGRATIONS) expect(guide, `add a row for ${migration} to the migrations table of docs/production.md`).toMatch(new RegExp(`^\\| \`${migration}\` \\| \\S`, 'm'));
  });

  it('gives the connection budget svc has', () => {
    // The guide's P = max(10, SVC_WEBHOOK_CONCURRENCY ÷ 4), and the LISTEN channels it counts.
    expect(read(join(SERVER, 'src/runtime.ts'))).toContain('poolSize: Math.max(10, config.webhookConcurrency / 4)');
    const postgres = read(join(SERVER, 'src/db/dialects/postgres.ts'));
    for (const [, channel] of guide.matchAll(/LISTEN (svc_\w+)/g)) expect(postgres).toContain(`'${channel}'`);
  });

  it('links to files and headings that exist, as does docs/README.md', () => {
    checkLinks(GUIDE);
    checkLinks(INDEX);
  });
});

describe('docs/README.md', () => {
  it('lists every doc in docs/ and every package README', () => {
    const index = read(INDEX);
    const docs = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md') && f !== 'README.md');
    for (const doc of docs) expect(index, `add a line for ${doc} to docs/README.md`).toContain(`](${doc})`);
    for (const pkg of readdirSync(join(ROOT, 'packages'))) {
      if (existsSync(join(ROOT, 'packages', pkg, 'README.md'))) expect(index).toContain(`](../packages/${pkg}/README.md)`);
    }
  });
});

describe.each(DIALECTS)('the guide\'s SQL on %s', (dialect) => {
  it.runIf(dialect === 'postgres')('runs on a migrated database, and sets what it says', async () => {
    const test = await createTestDatabase('postgres');
    const name = new URL(test.url).pathname.slice(1);
    const database = await connect(test.url, { sqliteSynchronous: 'FULL' });
    const client = new pg.Client({ connectionString: test.url });
    try {
      await migrateToLatest(database);
      await client.connect();
      const blocks = fenced(guide, 'sql');
      expect(blocks.length).toBeGreaterThanOrEqual(4);
      for (const block of blocks) await client.query(block.replace(/alter database svc /g, `alter database "${name}" `));
      for (const [, table, list] of guide.matchAll(/alter table (\w+) set \(([^)]*)\)/g)) {
        const { rows } = await client.query<{ reloptions: string[] }>('select reloptions from pg_class where relname = $1', [table]);
        for (const option of list!.split(',')) expect(rows[0]!.reloptions, table).toContain(option.trim().replace(/\s*=\s*/, '='));
      }
      const settings = await client.query<{ setconfig: string[] }>(`select setconfig from pg_db_role_setting s join pg_database d on d.oid = s.setdatabase where d.datname = $1`, [name]);
      expect(settings.rows[0]!.setconfig).toContain('idle_in_transaction_session_timeout=5min');
    } finally {
      await client.end().catch(() => {});
      await database.close();
      await test.drop();
    }
  });
});
