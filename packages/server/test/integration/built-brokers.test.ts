import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROKER_URLS } from '../helpers/broker-rig.js';
import { createEmptyTestDatabase, type TestDatabase } from '../helpers/db.js';

/** The built command, as `npm start` and users run it (`npm test` builds first). */
const BUILT = fileURLToPath(new URL('../../dist/svc.mjs', import.meta.url));

/**
 * The brokers' clients as the bundle loads them. The Redis sender makes `@redis/client`'s client class itself, read
 * from a CommonJS module's default export, which Node and the bundler give differently from Vite's test runner: the
 * broker suites run the source, so only the built command shows that its worker really makes and connects each
 * client (`broker connected`), not that the client failed to load.
 */
describe.runIf(existsSync(BUILT) && (BROKER_URLS.redis || BROKER_URLS.nats || BROKER_URLS.amqp))('the built svc worker and its brokers', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createEmptyTestDatabase('sqlite');
  });
  afterAll(async () => db?.drop());

  it('connects to every configured broker', async () => {
    const brokers = [
      ...(BROKER_URLS.redis ? [['cache', BROKER_URLS.redis]] : []),
      ...(BROKER_URLS.nats ? [['events', BROKER_URLS.nats]] : []),
      ...(BROKER_URLS.amqp ? [['queue', BROKER_URLS.amqp]] : []),
    ];
    const child = spawn(process.execPath, [BUILT, 'worker'], {
      env: {
        PATH: process.env.PATH,
        SVC_DATABASE_URL: db.url,
        SVC_SECRET_KEY: randomBytes(32).toString('hex'),
        SVC_BROKERS: brokers.map(([name, url]) => `${name}=${url}`).join(','),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const connected = new Set<string>();
      const failures: string[] = [];
      let text = '';
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`not every broker connected within 20 s; log:\n${text}`)), 20_000);
        child.stdout!.on('data', (chunk: Buffer) => {
          text += chunk.toString();
          for (const line of text.split('\n')) {
            if (!line.startsWith('{')) continue;
            const entry = JSON.parse(line) as { msg?: string; broker?: string };
            if (entry.msg === 'broker connected' && entry.broker) connected.add(entry.broker);
            if (entry.msg === 'the broker client could not be loaded') failures.push(line);
          }
          if (failures.length > 0 || connected.size === brokers.length) {
            clearTimeout(timer);
            resolve();
          }
        });
        child.on('exit', (code) => reject(new Error(`svc worker exited with ${code}; log:\n${text}`)));
      });
      expect(failures).toEqual([]);
      expect([...connected].sort()).toEqual(brokers.map(([name]) => name).sort());
    } finally {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
    }
  });
});
