import { randomBytes } from 'node:crypto';
import { pino, type Logger } from 'pino';
import { loadConfig, type Config } from '../../src/config/load.js';
import type { Context } from '../../src/context.js';
import type { Clock } from '../../src/lib/clock.js';
import { openContext } from '../../src/runtime.js';
import type { Resolver } from '../../src/webhooks/destination-guard.js';
import { createTestDatabase, type Dialect, type TestDatabase } from './db.js';

export interface TestContext {
  ctx: Context;
  database: TestDatabase;
  close(): Promise<void>;
}

/** Environment variables as a person would set them, on a fresh database of the dialect. */
export async function createTestContext(
  dialect: Dialect,
  env: Record<string, string> = {},
  options: { clock?: Clock; resolver?: Resolver; database?: TestDatabase; logger?: Logger } = {},
): Promise<TestContext> {
  const database = options.database ?? (await createTestDatabase(dialect));
  const config: Config = loadConfig({
    SVC_PORT: '0',
    SVC_SECRET_KEY: randomBytes(32).toString('hex'),
    SVC_LOG_LEVEL: 'warn',
    ...env,
    SVC_DATABASE_URL: database.url,
  });
  const logger = options.logger ?? pino({ level: process.env.SVC_TEST_LOG_LEVEL ?? 'silent' });
  const ctx = await openContext(config, { logger, clock: options.clock, resolver: options.resolver });
  return {
    ctx,
    database,
    close: async () => {
      await ctx.database.close();
      await database.drop();
    },
  };
}

/**
 * A context for tests of statements' plans: no reader threads, so every read runs, and is explained, on the main
 * connection without its 20 ms budget (a loaded machine overran it: OverBudgetError). What such a test checks is each
 * statement's plan, not where it runs.
 */
export const createPlanTestContext = (dialect: Dialect): Promise<TestContext> => createTestContext(dialect, { SVC_SQLITE_READERS: '0' });
