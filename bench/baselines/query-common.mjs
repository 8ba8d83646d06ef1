// W11: the query both baselines run, and the SQL svc compiles for it (docs/queries.md): the same expressions, so
// the same partial indexes serve both. svc splices the collection name as a constant, so do the baselines.
export const W11_FILTER = "status = 'open' && priority >= 3";
export const W11_COLLECTION = 'issues';

// The limit as svc writes it on SQLite, `(? + 0)`: a bare `limit ?` is planned again at every bind (better-sqlite3
// binds every run) with no other effect on the plan (QueryDialect.limit), a cost neither side need pay.
export const SQLITE_QUERY = `select * from records where collection = '${W11_COLLECTION}'
  and json_extract(data, '$.status') = ? and json_extract(data, '$.priority') >= ?
  order by json_extract(data, '$.priority') desc nulls last, id limit (? + 0)`;

export const PG_QUERY = `select * from records where collection = '${W11_COLLECTION}'
  and ((data::jsonb ->> 'status') collate "C") = $1 and ((data::jsonb ->> 'priority')::numeric) >= cast($2 as numeric)
  order by ((data::jsonb ->> 'priority')::numeric) desc nulls last, id limit $3`;

/** A keyset cursor as svc's carries it: the last row's sort value and id. */
export const keysetCursor = (row) => Buffer.from(JSON.stringify({ after: row.id, v: [JSON.parse(row.data).priority ?? null], q: 'baseline' })).toString('base64url');
