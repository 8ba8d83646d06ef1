import type { Kysely } from 'kysely';
import type { Context } from '../context.js';
import type { Tables } from '../db/tables.js';
import { AppError } from '../errors.js';
import { feedMark } from '../events/feed-mark.js';
import type { FeedPosition } from '../events/feed-position.js';
import type { Field } from './fields.js';
import type { Filter } from './query/check.js';
import { firstMatching, type MatchingScope } from './query/records-query-store.js';
import { findRecord } from './records-store.js';

/**
 * The check before fields are made required: no record may lack one of them (absent, or null). It reads every record
 * of the collection, so it runs where records queries run (off SQLite's event loop, under SVC_QUERY_TIMEOUT_MS) and
 * leaves to the schema's own write only the records written while it read (docs/queries.md, "Making a field
 * required"):
 *
 * 1. every record, from a snapshot taken after a feed mark;
 * 2. the same way, the records that a record.created or record.updated event after that mark names, from a second mark;
 * 3. inside the schema's write transaction (`inWrite`), those after the second mark: what was written while step 2 ran.
 *
 * Every write that commits after a snapshot has its event after a mark taken before it (feed-mark.ts).
 */
export class RequiredCheck {
  private readonly filter: Filter;
  private checkedTo: FeedPosition | null = null;

  constructor(
    private readonly ctx: Context,
    private readonly collection: string,
    private readonly fields: readonly Field[],
  ) {
    this.filter = { type: 'or', items: fields.map((f) => ({ type: 'cmp', target: { kind: 'data', name: f.name, type: f.type }, op: '=', operand: { kind: 'null' } })) };
  }

  /** Steps 1 and 2: a record lacking a field is `conflict`; a read past the query timeout, `query_timeout`. */
  async beforeWrite(): Promise<void> {
    const { db, queries, caps } = this.ctx.database;
    const first = await feedMark(db, caps);
    await this.refuseAny(queries, { changedAfter: null }, true);
    const second = await feedMark(db, caps);
    await this.refuseAny(queries, { changedAfter: first }, true);
    this.checkedTo = second;
  }

  /**
   * Step 3, inside the schema's write. PostgreSQL: the collection's row is locked first, which waits for the record
   * inserts in flight (each holds it FOR KEY SHARE) so that they are seen; and the statement stops at the query
   * timeout, since the mark does not move while any transaction stays open (its scope may then be large). SQLite's
   * write transaction is the only one, and its marks always move: the scope is what step 2's read lasted.
   */
  async inWrite(trx: Kysely<Tables>): Promise<void> {
    if (this.checkedTo === null) throw new Error('RequiredCheck.inWrite before beforeWrite');
    const { caps } = this.ctx.database;
    await caps.lockRow(trx, 'collections', 'name', this.collection);
    await caps.limitStatements(trx, this.ctx.config.queryTimeoutMs);
    await this.refuseAny(trx, { changedAfter: this.checkedTo }, false);
  }

  private async refuseAny(db: Kysely<Tables>, scope: MatchingScope, stoppable: boolean): Promise<void> {
    const { caps } = this.ctx.database;
    const id = await firstMatching(db, caps.query, this.collection, this.filter, scope, stoppable).catch((err: unknown) => {
      if (!caps.isQueryTimeout(err)) throw err;
      throw new AppError('query_timeout', 'Checking that every record holds the field took longer than the query timeout (SVC_QUERY_TIMEOUT_MS).');
    });
    if (id === null) return;
    // The refusal names the fields that record lacks (read on the connection the check ran on, a single row).
    const found = await findRecord(db, this.collection, id);
    const lacks = this.fields.filter((f) => found === null || found.data[f.name] === undefined || found.data[f.name] === null).map((f) => `"${f.name}"`);
    throw new AppError('conflict', `Record ${id} lacks ${lacks.join(', ')}; fill it in on every record before making it required.`);
  }
}
