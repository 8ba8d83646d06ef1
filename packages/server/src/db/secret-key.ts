import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ConfigError, type Config } from '../config/schema.js';
import { sqlitePath } from './connect.js';

/**
 * The key that seals webhook secrets and derives CSRF tokens. SVC_SECRET_KEY wins; on SQLite without it,
 * a key file `svc-secret.key` beside the database is read or created (mode 0600). An in-memory database
 * gets a key for the life of the process.
 */
export function resolveSecretKey(config: Config): string {
  if (config.secretKey) return config.secretKey;
  const path = sqlitePath(config.databaseUrl);
  if (path === null) throw new ConfigError('SVC_SECRET_KEY', 'is required with PostgreSQL');
  if (path === ':memory:') return randomBytes(32).toString('hex');
  const file = join(dirname(path), 'svc-secret.key');
  if (existsSync(file)) {
    const text = readFileSync(file, 'utf8').trim();
    if (!/^[0-9a-f]{64}$/i.test(text)) throw new ConfigError('SVC_SECRET_KEY', `key file ${file} does not hold 64 hex characters`);
    return text.toLowerCase();
  }
  // The database's folder, when the key comes first: private like the database itself (db/dialects/sqlite.ts).
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const key = randomBytes(32).toString('hex');
  writeFileSync(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  chmodSync(file, 0o600);
  return key;
}
