import { sql, type RawBuilder } from 'kysely';

/**
 * On PostgreSQL the indexes of a target's, a record's and an event's jobs hold no job being delivered (migration 021),
 * so a claim writes none of their entries. A read by one of them that may find a job in any state asks in two arms:
 * the jobs those indexes hold (`<> 'delivering'`) and the few in flight (`= 'delivering'`). Literals, so PostgreSQL
 * can prove each arm's index applies; on SQLite, whose indexes are whole, both arms read the same index.
 */
export const jobStateArms = (stateColumn: string): readonly [settled: RawBuilder<boolean>, inFlight: RawBuilder<boolean>] => [
  sql<boolean>`${sql.ref(stateColumn)} <> 'delivering'`,
  sql<boolean>`${sql.ref(stateColumn)} = 'delivering'`,
];

/** No job `j` of the event in `eventColumn` meets `where`, asked of each arm. */
export function noJobOfEvent(eventColumn: string, where: RawBuilder<boolean>): RawBuilder<boolean> {
  const none = (arm: RawBuilder<boolean>) => sql`not exists (select 1 from delivery_jobs j where j.event_id = ${sql.ref(eventColumn)} and ${where} and ${arm})`;
  const [settled, inFlight] = jobStateArms('j.state');
  return sql<boolean>`${none(settled)} and ${none(inFlight)}`;
}
