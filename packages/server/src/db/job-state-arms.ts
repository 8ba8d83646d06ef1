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

/**
 * No job `j` of the event in `eventColumn` meets `where` (a condition on `j` alone), asked of each arm: the settled
 * jobs probed per event in the event's index, the jobs in flight read once per statement as a set (`not in`, which
 * PostgreSQL never makes a join and hashes; event_id is never null, so it means what `not exists` would). As a
 * correlated `not exists` the planner, its statistics taken while few jobs were in flight, compared every event with
 * every job in flight: a retention pass walking 10,000 kept events beside 10,000 jobs in flight touched 110 million
 * rows (~10 s; test retention-in-flight-cost). On SQLite the set is read from the leases' index once per statement.
 * `inFlightWhere` (default `where`) is the condition as the set reads it, where an index must not be chosen by it.
 */
export function noJobOfEvent(eventColumn: string, where: RawBuilder<boolean>, inFlightWhere: RawBuilder<boolean> = where): RawBuilder<boolean> {
  const [settled, inFlight] = jobStateArms('j.state');
  return sql<boolean>`not exists (select 1 from delivery_jobs j where j.event_id = ${sql.ref(eventColumn)} and ${where} and ${settled})
    and ${sql.ref(eventColumn)} not in (select j.event_id from delivery_jobs j where ${inFlight} and ${inFlightWhere})`;
}
