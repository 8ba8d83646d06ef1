import type { ClaimOutcome, DedupeStore } from './dedupe-store.js';

/**
 * What the store needs of a Redis client: one way to send a raw command and get its reply. node-redis (v4, v5) has
 * exactly this `sendCommand`, so a client from `createClient()` is passed as it is. Other clients take one line, e.g.
 * ioredis: `{ sendCommand: ([name, ...args]) => redis.call(name, ...args) }`. Duck-typed so svc-sdk carries no
 * dependency on a Redis client.
 */
export interface RedisCommandSender {
  sendCommand(args: string[]): Promise<unknown>;
}

export interface RedisDedupeStoreOptions {
  /** Put before every delivery id to make its key; default `svc:webhook-delivery:`. */
  keyPrefix?: string;
}

// One key per delivery id. Its value is `done`, or `in_progress:<token>` while a run holds it; its expiry is the
// state's TTL, so Redis itself forgets a crashed run's claim. Each script reads and writes the key in one step (Redis
// runs a script without interleaving anything), which is what makes claim, complete and release atomic.
const IN_PROGRESS = 'in_progress:';

const CLAIM = `
local v = redis.call('GET', KEYS[1])
if v == 'done' then return 'done' end
if v then return 'in_progress' end
redis.call('SET', KEYS[1], '${IN_PROGRESS}' .. ARGV[1], 'PX', ARGV[2])
return 'claimed'`;

const COMPLETE = `
local v = redis.call('GET', KEYS[1])
if v and v ~= '${IN_PROGRESS}' .. ARGV[1] then return 0 end
redis.call('SET', KEYS[1], 'done', 'PX', ARGV[2])
return 1`;

const RELEASE = `
if redis.call('GET', KEYS[1]) == '${IN_PROGRESS}' .. ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

function milliseconds(seconds: number): string {
  // PX takes a positive integer: round up so a TTL never ends early.
  return String(Math.max(1, Math.ceil(seconds * 1000)));
}

/**
 * A `DedupeStore` shared by every process using the same Redis. Scripts are sent with EVAL rather than EVALSHA: they
 * are a few hundred bytes, and EVAL needs no fallback for a server that restarted and lost its script cache.
 */
export class RedisDedupeStore implements DedupeStore {
  readonly #redis: RedisCommandSender;
  readonly #prefix: string;

  constructor(redis: RedisCommandSender, options: RedisDedupeStoreOptions = {}) {
    if (typeof redis?.sendCommand !== 'function') {
      throw new TypeError('RedisDedupeStore needs a client with sendCommand(args): see RedisCommandSender');
    }
    this.#redis = redis;
    this.#prefix = options.keyPrefix ?? 'svc:webhook-delivery:';
  }

  async claim(id: string, token: string, inProgressTtlSeconds: number): Promise<ClaimOutcome> {
    const reply = String(await this.#eval(CLAIM, id, token, milliseconds(inProgressTtlSeconds)));
    if (reply !== 'claimed' && reply !== 'in_progress' && reply !== 'done') {
      throw new Error(`RedisDedupeStore: unexpected reply to a claim: ${reply}`);
    }
    return reply;
  }

  async complete(id: string, token: string, doneTtlSeconds: number): Promise<boolean> {
    return Number(await this.#eval(COMPLETE, id, token, milliseconds(doneTtlSeconds))) === 1;
  }

  async release(id: string, token: string): Promise<boolean> {
    return Number(await this.#eval(RELEASE, id, token)) === 1;
  }

  #eval(script: string, id: string, ...args: string[]): Promise<unknown> {
    return this.#redis.sendCommand(['EVAL', script, '1', this.#prefix + id, ...args]);
  }
}
