import type { Logger } from 'pino';
import type { Config } from './config/schema.js';
import type { Database } from './db/connect.js';
import type { Clock } from './lib/clock.js';
import type { SecretBox } from './lib/crypto.js';
import type { Resolver } from './lib/resolver.js';

/** What every component is handed at start: built once in main.ts (or a test), never a global. */
export interface Context {
  readonly config: Config;
  readonly database: Database;
  readonly clock: Clock;
  readonly box: SecretBox;
  readonly logger: Logger;
  /** DNS for webhook destinations; tests inject one. */
  readonly resolver: Resolver;
}
